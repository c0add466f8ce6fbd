package analyze_test

import (
	"github.com/tokentrace/tokentrace/analyze"
	"github.com/tokentrace/tokentrace/convention"
	"github.com/tokentrace/tokentrace/ingest/registry"
)

// tools are every convention and tool profile, as cmd builds them.
var tools = convention.NewSet(analyze.Canonical, registry.Tools()...).WithTraps(analyze.Traps...).WithTraps(registry.Traps()...)
