package reproduce_test

import (
	"github.com/tokentrace/tokentrace/analyze"
	"github.com/tokentrace/tokentrace/analyze/reproduce"
	"github.com/tokentrace/tokentrace/convention"
	"github.com/tokentrace/tokentrace/ingest/registry"
)

// tools are every convention and tool profile, as cmd builds them, and
// options the report options cmd builds from them.
var (
	tools   = convention.NewSet(analyze.Canonical, registry.Tools()...)
	options = analyze.Options{Tools: tools, Reproduce: reproduce.Reproducer(tools)}
)
