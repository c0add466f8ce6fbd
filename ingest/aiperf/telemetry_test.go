package aiperf

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tokentrace/tokentrace/formats"
	"github.com/tokentrace/tokentrace/ingest"
)

const telemetrySample = corpus + "/gpu-telemetry-qwen-c1/" + TelemetryFile

// TestTelemetryAlone: AIPerf's real GPU telemetry sample imports on its own
// as a run with series only: 20 records × 15 fields = 300 points, the
// first record's values and labels as the file holds them
// ({"timestamp_ns":1762551530946074466, … "hostname":"7a22ed6f1fd7",
// "telemetry_data":{"gpu_power_usage":30.257, …}, … "localhost:9400"}).
func TestTelemetryAlone(t *testing.T) {
	head, err := ingest.ReadHead(telemetrySample)
	if err != nil {
		t.Fatal(err)
	}
	if !New().Detect(telemetrySample, head) {
		t.Fatal("telemetry export not recognized")
	}
	c, _ := importFile(t, telemetrySample, "tel")
	if len(c.Runs) != 1 || len(c.Requests) != 0 {
		t.Fatalf("%d runs, %d requests", len(c.Runs), len(c.Requests))
	}
	run := c.Runs[0]
	if len(run.Series) != 300 || len(run.SourceFiles) != 1 || run.SourceFiles[0].Role != "telemetry" ||
		run.SourceFiles[0].SHA256 != "660a0ff25219820fe4b18f454fda9d1d8d6c619f9688132b15fa9bfd90f6311f" {
		t.Fatalf("%d points, sources %+v", len(run.Series), run.SourceFiles)
	}
	var power *formats.SeriesPoint
	for i := range run.Series {
		if run.Series[i].Metric == "gpu:gpu_power_usage" {
			power = &run.Series[i]
			break
		}
	}
	wantLabels := `device="nvidia0",gpu_index="0",gpu_model_name="NVIDIA RTX 6000 Ada Generation",gpu_uuid="GPU-ef6ef310-f8e2-cef9-036e-8f12d59b5ffc",hostname="7a22ed6f1fd7",pci_bus_id="00000000:02:00.0",telemetry_source_url="http://localhost:9400/metrics"`
	if power == nil || power.Value != 30.257 || power.Unit != "W" || power.TimeNs != 1762551530946074466 || power.ClockDomain != formats.ClockUnix || power.Labels != wantLabels {
		t.Fatalf("first power point %+v", power)
	}
	// two exporters: two label sets per metric, 10 points each
	sets := map[string]int{}
	for _, p := range run.Series {
		if p.Metric == "gpu:gpu_utilization" {
			sets[p.Labels]++
		}
	}
	if len(sets) != 2 {
		t.Errorf("utilization label sets %v", sets)
	}
	for _, n := range sets {
		if n != 10 {
			t.Errorf("utilization points per exporter %v", sets)
		}
	}
}

// TestTelemetryBesideRecords: beside a profile_export.jsonl the telemetry
// becomes the profiling run's series and a "telemetry" source file, and is
// not imported again on its own; a last line cut short is noted, a bad
// line leaves the run without series and a warning naming the line.
func TestTelemetryBesideRecords(t *testing.T) {
	dir := t.TempDir()
	rec := `{"metadata":{"request_start_ns":1762551531000000000,"request_end_ns":1762551531500000000,"benchmark_phase":"profiling"},"metrics":{"request_latency":{"value":500.0,"unit":"ms"},"time_to_first_token":{"value":100.0,"unit":"ms"},"output_sequence_length":{"value":1,"unit":"tokens"}},"error":null}` + "\n"
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.WriteFile(filepath.Join(dir, "profile_export.jsonl"), []byte(rec), 0o644))
	sample, err := os.ReadFile(telemetrySample)
	must(err)
	lines := strings.SplitAfter(string(sample), "\n")
	cut := strings.Join(lines[:3], "") + lines[3][:100]
	must(os.WriteFile(filepath.Join(dir, TelemetryFile), []byte(cut), 0o644))
	if comps := New().Companions(filepath.Join(dir, "profile_export.jsonl")); len(comps) != 1 || filepath.Base(comps[0]) != TelemetryFile {
		t.Fatalf("companions %v", comps)
	}
	c, warns := importFile(t, filepath.Join(dir, "profile_export.jsonl"), "r")
	run := c.Runs[0]
	if len(c.Requests) != 1 || len(run.Series) != 45 || run.SourceFiles[len(run.SourceFiles)-1].Role != "telemetry" {
		t.Fatalf("%d requests, %d points, sources %+v", len(c.Requests), len(run.Series), run.SourceFiles)
	}
	if len(warns) != 1 || !strings.Contains(warns[0], "line 4 is incomplete (file cut); complete records imported before it: 3") {
		t.Errorf("warnings %q", warns)
	}
	must(os.WriteFile(filepath.Join(dir, TelemetryFile), []byte(lines[0]+"{\"timestamp_ns\": 5}\n"), 0o644))
	c, warns = importFile(t, filepath.Join(dir, "profile_export.jsonl"), "r")
	if len(c.Runs[0].Series) != 0 || len(warns) != 1 || !strings.Contains(warns[0], TelemetryFile+": line 2: GPU telemetry record without timestamp_ns or telemetry_data") {
		t.Errorf("bad line: %d points, warnings %q", len(c.Runs[0].Series), warns)
	}
}

// TestTelemetryOddValues: a NaN (as Python writes it), a number written as
// a string and a string that is no number in one record's telemetry_data
// do not drop the file: the NaN and the word are left out, the quoted
// number read, and one warning counts them.
func TestTelemetryOddValues(t *testing.T) {
	sample, err := os.ReadFile(telemetrySample)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(sample), "\n")
	odd := strings.Replace(lines[1], `"gpu_power_usage":30.193`, `"gpu_power_usage": NaN`, 1)
	odd = strings.Replace(odd, `"energy_consumption":32.62748095`, `"energy_consumption":"32.62748095"`, 1)
	odd = strings.Replace(odd, `"gpu_utilization":2.0`, `"gpu_utilization":"busy"`, 1)
	if odd == lines[1] {
		t.Fatal("the sample's second line changed: the test's replacements no longer apply")
	}
	path := filepath.Join(t.TempDir(), TelemetryFile)
	if err := os.WriteFile(path, []byte(lines[0]+odd+lines[2]), 0o644); err != nil {
		t.Fatal(err)
	}
	c, warns := importFile(t, path, "r")
	pts := c.Runs[0].Series
	// 3 records × 15 fields, less the NaN and the word
	if len(pts) != 3*15-2 {
		t.Errorf("%d points, want %d", len(pts), 3*15-2)
	}
	found := false
	for _, p := range pts {
		if p.Metric == TelemetryMetricPrefix+"energy_consumption" && p.Value == 32.62748095 && strings.Contains(p.Labels, "2e2a9f1c15f9") {
			found = true
		}
	}
	if !found {
		t.Error("the quoted energy reading was not read")
	}
	if w := strings.Join(warns, "\n"); !strings.Contains(w, "not finite (NaN, ±Infinity: left out) 1, numbers written as strings (read) 1, not numbers (left out) 1") {
		t.Errorf("warnings %q", warns)
	}
}
