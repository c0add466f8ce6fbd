package aiperf

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"

	"github.com/tokentrace/tokentrace/formats"
	"github.com/tokentrace/tokentrace/ingest"
)

// TelemetryFile is the name of AIPerf's GPU telemetry export, written
// beside profile_export.jsonl when GPU telemetry is collected
// (--gpu-telemetry; DCGM exporters scraped about every 0.33 s,
// aiperf/gpu_telemetry/constants.py DEFAULT_COLLECTION_INTERVAL). A real
// sample: ai-dynamo/aiperf tests/unit/plot/fixtures/qwen_concurrency1/
// (testdata/aiperf/gpu-telemetry-qwen-c1).
const TelemetryFile = "gpu_telemetry_export.jsonl"

// TelemetryMetricPrefix prefixes the series names of the telemetry
// fields: "gpu:gpu_power_usage".
const TelemetryMetricPrefix = "gpu:"

// telemetryUnits are the units AIPerf gives the telemetry fields
// (GPU_TELEMETRY_METRICS_CONFIG in aiperf's metrics: power W, energy MJ,
// utilization %, memory GB, clocks MHz, temperatures °C, XID errors a
// count, violations µs). A field not listed gets no unit.
var telemetryUnits = map[string]string{
	"gpu_power_usage": "W", "power_management_limit": "W", "energy_consumption": "MJ",
	"gpu_utilization": "%", "memory_copy_utilization": "%", "mem_copy_util": "%",
	"gpu_memory_used": "GB", "gpu_memory_free": "GB", "gpu_memory_total": "GB",
	"sm_clock_frequency": "MHz", "memory_clock_frequency": "MHz",
	"gpu_temperature": "C", "memory_temperature": "C",
	"xid_errors": "count", "power_violation": "us", "thermal_violation": "us",
}

// telemetryRecord is one line of gpu_telemetry_export.jsonl (AIPerf's
// TelemetryRecord): when, which GPU, and the field values (null: not
// scraped).
type telemetryRecord struct {
	TimestampNs   *int64                     `json:"timestamp_ns"`
	GPUIndex      *int64                     `json:"gpu_index"`
	GPUUUID       string                     `json:"gpu_uuid"`
	GPUModelName  string                     `json:"gpu_model_name"`
	PCIBusID      string                     `json:"pci_bus_id"`
	Device        string                     `json:"device"`
	Hostname      string                     `json:"hostname"`
	SourceURL     string                     `json:"telemetry_source_url"`
	TelemetryData map[string]json.RawMessage `json:"telemetry_data"`
}

// nonFiniteValue matches a bare NaN or ±Infinity written as a JSON value
// (Python's json.dumps writes them), which encoding/json refuses: they are
// read as null, and counted.
var nonFiniteValue = regexp.MustCompile(`(:\s*)(-?Infinity|NaN)(\s*[,}])`)

// isTelemetry reports whether head is the start of a GPU telemetry export:
// a JSON object line with "timestamp_ns" and "telemetry_data" keys, or an
// empty file named TelemetryFile.
func isTelemetry(path string, head []byte) bool {
	top, _ := firstLineKeys(bytes.TrimPrefix(head, []byte("\xef\xbb\xbf")))
	has := func(k string) bool {
		for _, t := range top {
			if t == k {
				return true
			}
		}
		return false
	}
	if has("timestamp_ns") && has("telemetry_data") {
		return true
	}
	return filepath.Base(path) == TelemetryFile && len(bytes.TrimSpace(head)) == 0
}

// readTelemetry reads a GPU telemetry export into series points, one per
// record and non-null field, in file order: metric TelemetryMetricPrefix +
// field, labels from the record's GPU identity (gpu_index, gpu_uuid,
// gpu_model_name, pci_bus_id, device, hostname, telemetry_source_url, the
// empty ones left out), clock "unix". A record without timestamp_ns or
// telemetry_data is an error naming its line; a last line cut short is
// dropped with a note (the notes say how many records were read). Past
// maxPoints (Options.MaxSeriesPoints) the records are thinned evenly, with
// a warning (ingest.SeriesBuf).
func readTelemetry(r io.Reader, path string, maxLine, maxPoints int64, notes *ingest.Notes) ([]formats.SeriesPoint, error) {
	br := bufio.NewReaderSize(r, 1<<20)
	buf := ingest.SeriesBuf{Max: maxPoints}
	records := 0
	nonFinite, quoted, notNumber := 0, 0, 0 // values read as null, read from strings, left out
	for lineNo := 1; ; lineNo++ {
		line, complete, err := ingest.ReadLine(br, maxLine)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, ingest.Wrap(path, fmt.Sprintf("line %d", lineNo), err)
		}
		t := jsonTrim(line)
		if len(t) == 0 {
			continue
		}
		if nonFiniteValue.Match(t) {
			nonFinite += len(nonFiniteValue.FindAll(t, -1))
			t = nonFiniteValue.ReplaceAll(t, []byte("${1}null${3}"))
		}
		dec := json.NewDecoder(bytes.NewReader(t))
		var rec telemetryRecord
		if jerr := dec.Decode(&rec); jerr != nil {
			if !complete && errors.Is(jerr, io.ErrUnexpectedEOF) {
				notes.Warn(fmt.Sprintf("%s: line %d is incomplete (file cut); complete records imported before it: %d", filepath.Base(path), lineNo, records))
				break
			}
			return nil, ingest.Errorf(path, fmt.Sprintf("line %d", lineNo), "not a GPU telemetry record: %v", jerr)
		}
		if dec.InputOffset() != int64(len(t)) {
			return nil, ingest.Errorf(path, fmt.Sprintf("line %d", lineNo), "data after the JSON record")
		}
		if rec.TimestampNs == nil || rec.TelemetryData == nil {
			return nil, ingest.Errorf(path, fmt.Sprintf("line %d", lineNo), "GPU telemetry record without timestamp_ns or telemetry_data")
		}
		labels := map[string]string{}
		if rec.GPUIndex != nil {
			labels["gpu_index"] = strconv.FormatInt(*rec.GPUIndex, 10)
		}
		for k, v := range map[string]string{"gpu_uuid": rec.GPUUUID, "gpu_model_name": rec.GPUModelName, "pci_bus_id": rec.PCIBusID,
			"device": rec.Device, "hostname": rec.Hostname, "telemetry_source_url": rec.SourceURL} {
			if v != "" {
				labels[k] = v
			}
		}
		ls := formats.LabelString(labels)
		fields := make([]string, 0, len(rec.TelemetryData))
		values := make(map[string]float64, len(rec.TelemetryData))
		for k, raw := range rec.TelemetryData {
			switch x, st := ingest.ReadJSONNumber(raw); st {
			case ingest.JSONNumber:
				values[k] = x
				fields = append(fields, k)
			case ingest.JSONQuoted:
				values[k] = x
				fields = append(fields, k)
				quoted++
			case ingest.JSONAbsent:
			default:
				notNumber++ // a string, a list: not a reading
			}
		}
		sort.Strings(fields)
		for _, f := range fields {
			buf.Add(formats.SeriesPoint{Metric: TelemetryMetricPrefix + f, Labels: ls, Unit: telemetryUnits[f],
				TimeNs: *rec.TimestampNs, ClockDomain: formats.ClockUnix, Value: values[f]}, int64(records))
		}
		records++
	}
	out := buf.Points()
	notes.Add(fmt.Sprintf("GPU telemetry from %s: %d records, %d series points (runs.series, metrics %s*)", filepath.Base(path), records, len(out), TelemetryMetricPrefix))
	if nonFinite+quoted+notNumber > 0 {
		notes.Warn(fmt.Sprintf("%s: telemetry values not finite (NaN, ±Infinity: left out) %d, numbers written as strings (read) %d, not numbers (left out) %d",
			filepath.Base(path), nonFinite, quoted, notNumber))
	}
	if n := buf.Note(); n != "" {
		notes.Warn(filepath.Base(path) + ": " + n)
	}
	return out, nil
}

// telemetryBeside reads the GPU telemetry export beside path (a
// profile_export.jsonl), if there is one, into the run: its points into
// Series and its description into SourceFiles (role "telemetry"). A file
// that cannot be read is a warning, and the run is imported without it.
func telemetryBeside(path string, opt ingest.Options, notes *ingest.Notes) ([]formats.SeriesPoint, *formats.SourceFile) {
	p := filepath.Join(filepath.Dir(path), TelemetryFile)
	if path == ingest.StdinPath || !ingest.Exists(p) {
		return nil, nil
	}
	o := opt
	o.NoHash = false
	in, err := ingest.Open(p, o)
	if err != nil {
		notes.WarnNamed(fmt.Sprintf("%s: not read: %v", p, err))
		return nil, nil
	}
	defer in.Close()
	pts, err := readTelemetry(in, p, in.MaxValue(), opt.MaxSeriesPoints, notes)
	if err != nil {
		notes.WarnNamed(fmt.Sprintf("GPU telemetry not imported: %v", err))
		return nil, nil
	}
	src, err := in.SourceFile("telemetry")
	if err != nil {
		notes.WarnNamed(fmt.Sprintf("GPU telemetry not imported: %v", err))
		return nil, nil
	}
	return pts, &src
}

// importTelemetryOnly imports a GPU telemetry export given on its own: a
// Run with its series and no requests.
func importTelemetryOnly(in *ingest.Input, label string, opt ingest.Options, sink formats.Sink) error {
	notes := ingest.NewNotes(in.Path, opt)
	pts, err := readTelemetry(in, in.Path, in.MaxValue(), opt.MaxSeriesPoints, notes)
	if err != nil {
		return err
	}
	src, err := in.SourceFile("telemetry")
	if err != nil {
		return err
	}
	run := formats.Run{RunID: label, Tool: Name, Convention: "aiperf", ClockDomain: formats.ClockUnix,
		SourceFiles: []formats.SourceFile{src}, TokentraceVersion: formats.Version, SchemaVersion: formats.SchemaVersion,
		Series: pts, Notes: append([]string{"GPU telemetry only: series, no requests"}, notes.Lines...)}
	return sink.Run(&run)
}
