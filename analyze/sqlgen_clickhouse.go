package analyze

import (
	"fmt"
	"strings"

	"github.com/tokentrace/tokentrace/convention"
)

// The generated parts of analyze/sql/canonical_clickhouse.sql, the
// canonical convention in ClickHouse SQL: the same metric table and
// data-check catalogue as canonical.sql's parts (CanonicalSamplesSQL,
// CanonicalMetricsSQL, CanonicalFixesSQL), in ClickHouse's forms where the
// dialects differ. TestCanonicalSQLMetrics keeps both files current.

// CanonicalFixesClickHouseSQL is canonical_fixes for ClickHouse: a Memory
// table and its rows, (code, fix) for every trap of traps with an
// analysis-time fix.
func CanonicalFixesClickHouseSQL(traps []convention.Trap) string {
	var rows []string
	for _, t := range traps {
		if t.Fix != convention.FixNone {
			rows = append(rows, fmt.Sprintf("    ('%s', '%s')", t.Code, t.Fix))
		}
	}
	s := "CREATE OR REPLACE TABLE canonical_fixes (code String, fix String) ENGINE = Memory;"
	if len(rows) > 0 {
		s += "\nINSERT INTO canonical_fixes VALUES\n" + strings.Join(rows, ",\n") + ";"
	}
	return s
}

// CanonicalMetricsClickHouseSQL is the one-column relation of the report
// metrics' keys that canonical_stats crosses every run with (ClickHouse
// has no VALUES list in FROM).
func CanonicalMetricsClickHouseSQL() string {
	var keys []string
	for _, m := range Table {
		if m.Report {
			keys = append(keys, "'"+m.Key+"'")
		}
	}
	return "(SELECT arrayJoin([" + strings.Join(keys, ", ") + "]) AS metric) m"
}

// Markers around the generated parts of canonical_clickhouse.sql; its
// canonical_samples view is CanonicalSamplesSQL, unchanged (the metric
// expressions are SQL both engines read).
const (
	FixesClickHouseBegin   = "-- canonical-fixes-clickhouse:begin (generated from the data-check catalogue by go test ./analyze -run TestCanonicalSQLMetrics -update)"
	FixesClickHouseEnd     = "-- canonical-fixes-clickhouse:end"
	SamplesClickHouseBegin = "-- canonical-samples-clickhouse:begin (generated from analyze/metric.go by go test ./analyze -run TestCanonicalSQLMetrics -update)"
	SamplesClickHouseEnd   = "-- canonical-samples-clickhouse:end"
	MetricsClickHouseBegin = "-- canonical-metrics-clickhouse:begin (generated likewise)"
	MetricsClickHouseEnd   = "-- canonical-metrics-clickhouse:end"
)
