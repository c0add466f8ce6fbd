package analyze

import (
	"github.com/tokentrace/tokentrace/convention"
	"github.com/tokentrace/tokentrace/ingest/registry"
)

// tools are every convention and tool profile, as cmd builds them: the
// canonical convention and the importers' (registry.Tools).
var tools = convention.NewSet(Canonical, registry.Tools()...).WithTraps(Traps...).WithTraps(registry.Traps()...)
