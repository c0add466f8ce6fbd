package formats

import (
	"reflect"
	"slices"
	"strings"
)

// requestRow is a row of the requests table as the files hold it: the
// Request's columns, then the columns derived from them for notebooks,
// which ReadTables does not read back (a Request has no field for them).
// The writers (Parquet, Arrow IPC, CSV) fill them from the Request
// (newRequestRow).
type requestRow struct {
	Request
	// StartTime is StartNs as a TIMESTAMP (UTC, ns) when ClockDomain is
	// "unix" (wall clock); null for a monotonic clock or an unknown start.
	StartTime *int64 `parquet:"start_time,optional,timestamp(nanosecond)"`
	// ServerArrivalTime is ServerArrivalNs as a TIMESTAMP (UTC, ns) when
	// ServerClockDomain is "unix"; null for the other server clocks
	// (monotonic, elapsed, and "local", whose zone is unknown).
	ServerArrivalTime *int64 `parquet:"server_arrival_time,optional,timestamp(nanosecond)"`
}

// newRequestRow returns r with its derived columns.
func newRequestRow(r *Request) requestRow {
	row := requestRow{Request: *r}
	if r.StartNs != nil && r.ClockDomain == ClockUnix {
		row.StartTime = r.StartNs
	}
	if r.ServerArrivalNs != nil && r.ServerClockDomain == ClockUnix {
		row.ServerArrivalTime = r.ServerArrivalNs
	}
	return row
}

// tableRowTypes are the Go types of the tables' rows as the files hold
// them (columns in field order, embedded structs flattened).
var tableRowTypes = map[string]reflect.Type{
	TableEvents:   reflect.TypeFor[Event](),
	TableRequests: reflect.TypeFor[requestRow](),
	TableRuns:     reflect.TypeFor[Run](),
}

// columnFields returns the fields of struct type t that are table
// columns, in column order: those with a parquet tag name, the fields of
// embedded structs in their place (use Value.FieldByIndex with Index).
func columnFields(t reflect.Type) []reflect.StructField {
	var fs []reflect.StructField
	for _, f := range reflect.VisibleFields(t) {
		if !f.Anonymous && ColumnName(f) != "" {
			fs = append(fs, f)
		}
	}
	return fs
}

// tagOption reports whether a field's parquet tag lists option
// ("optional", "timestamp(nanosecond)", …; matched up to a parenthesis).
func tagOption(f reflect.StructField, option string) bool {
	opts := strings.Split(f.Tag.Get("parquet"), ",")
	if len(opts) < 2 {
		return false
	}
	return slices.ContainsFunc(opts[1:], func(o string) bool {
		name, _, _ := strings.Cut(o, "(")
		return name == option
	})
}

// nullableString reports whether f is a Go string written as a nullable
// column ("" is null).
func nullableString(f reflect.StructField) bool {
	return f.Type.Kind() == reflect.String && tagOption(f, "optional")
}

// isTimestamp reports whether f is written as a TIMESTAMP column.
func isTimestamp(f reflect.StructField) bool { return tagOption(f, "timestamp") }
