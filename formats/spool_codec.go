package formats

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"reflect"
	"time"
)

// The spool's record encoding: each field of a row in declaration order,
// by kind — strings as a uvarint length and the bytes, integers as
// varints, float64 as its 8 IEEE bytes (NaN and ±Inf kept), bools as a
// byte, time.Time as its length-prefixed MarshalBinary form; a pointer
// field as a presence byte (0 nil, 1 set) and its value —
// so a row reads back exactly as it was written, a pointer to zero
// included. A field of another type is refused when the codec is built
// (at package init for Request), so a new column cannot be dropped
// silently.

type fieldKind uint8

const (
	kString fieldKind = iota
	kInt
	kFloat
	kBool
	kTime // time.Time, as its MarshalBinary form
)

var timeType = reflect.TypeFor[time.Time]()

type codecField struct {
	index int
	kind  fieldKind
	ptr   bool
}

type rowCodec []codecField

// newRowCodec lists t's fields for the codec; it panics on a field type
// it cannot encode.
func newRowCodec(t reflect.Type) rowCodec {
	var c rowCodec
	for i := 0; i < t.NumField(); i++ {
		ft := t.Field(i).Type
		f := codecField{index: i}
		if ft.Kind() == reflect.Pointer {
			f.ptr, ft = true, ft.Elem()
		}
		switch ft.Kind() {
		case reflect.Struct:
			if ft != timeType {
				panic(fmt.Sprintf("formats: spool codec: field %s.%s of type %s", t.Name(), t.Field(i).Name, t.Field(i).Type))
			}
			f.kind = kTime
		case reflect.String:
			f.kind = kString
		case reflect.Int64, reflect.Int32, reflect.Int:
			f.kind = kInt
		case reflect.Float64:
			f.kind = kFloat
		case reflect.Bool:
			f.kind = kBool
		default:
			panic(fmt.Sprintf("formats: spool codec: field %s.%s of type %s", t.Name(), t.Field(i).Name, t.Field(i).Type))
		}
		c = append(c, f)
	}
	return c
}

var requestCodec = newRowCodec(reflect.TypeFor[Request]())

// append encodes the struct v points to onto b.
func (c rowCodec) append(b []byte, v reflect.Value) []byte {
	for _, f := range c {
		x := v.Field(f.index)
		if f.ptr {
			if x.IsNil() {
				b = append(b, 0)
				continue
			}
			b = append(b, 1)
			x = x.Elem()
		}
		switch f.kind {
		case kString:
			s := x.String()
			b = binary.AppendUvarint(b, uint64(len(s)))
			b = append(b, s...)
		case kInt:
			b = binary.AppendVarint(b, x.Int())
		case kFloat:
			b = binary.LittleEndian.AppendUint64(b, math.Float64bits(x.Float()))
		case kBool:
			if x.Bool() {
				b = append(b, 1)
			} else {
				b = append(b, 0)
			}
		case kTime:
			tb, err := x.Interface().(time.Time).MarshalBinary()
			if err != nil { // a zone offset beyond what the form holds
				panic(fmt.Sprintf("formats: spool codec: %v", err))
			}
			b = binary.AppendUvarint(b, uint64(len(tb)))
			b = append(b, tb...)
		}
	}
	return b
}

var errSpoolRecord = errors.New("damaged spool record")

// decode sets the fields of the struct v points to from b (one record
// exactly).
func (c rowCodec) decode(b []byte, v reflect.Value) error {
	for _, f := range c {
		x := v.Field(f.index)
		if f.ptr {
			if len(b) == 0 {
				return errSpoolRecord
			}
			set := b[0]
			b = b[1:]
			if set == 0 {
				x.SetZero()
				continue
			}
			p := reflect.New(x.Type().Elem())
			x.Set(p)
			x = p.Elem()
		}
		switch f.kind {
		case kString:
			n, k := binary.Uvarint(b)
			if k <= 0 || uint64(len(b)-k) < n {
				return errSpoolRecord
			}
			x.SetString(string(b[k : k+int(n)]))
			b = b[k+int(n):]
		case kInt:
			n, k := binary.Varint(b)
			if k <= 0 {
				return errSpoolRecord
			}
			x.SetInt(n)
			b = b[k:]
		case kFloat:
			if len(b) < 8 {
				return errSpoolRecord
			}
			x.SetFloat(math.Float64frombits(binary.LittleEndian.Uint64(b)))
			b = b[8:]
		case kBool:
			if len(b) == 0 {
				return errSpoolRecord
			}
			x.SetBool(b[0] != 0)
			b = b[1:]
		case kTime:
			n, k := binary.Uvarint(b)
			if k <= 0 || uint64(len(b)-k) < n {
				return errSpoolRecord
			}
			var tm time.Time
			if err := tm.UnmarshalBinary(b[k : k+int(n)]); err != nil {
				return errSpoolRecord
			}
			x.Set(reflect.ValueOf(tm))
			b = b[k+int(n):]
		}
	}
	if len(b) != 0 {
		return errSpoolRecord
	}
	return nil
}
