package slo

import (
	"github.com/tokentrace/tokentrace/analyze"
	"github.com/tokentrace/tokentrace/convention"
	"github.com/tokentrace/tokentrace/formats"
	"github.com/tokentrace/tokentrace/ingest/registry"
	"github.com/tokentrace/tokentrace/internal/reqtest"
)

// tools are every convention and tool profile, as cmd builds them.
var tools = convention.NewSet(analyze.Canonical, registry.Tools()...)

// ev is one message of a hand-made request (offset ns, kind, tokens);
// mkRequest builds the request through internal/reqtest.
type ev struct {
	off  int64
	kind string
	tok  *int32
}

func mkRequest(key int64, start int64, events []ev, usage *int64) (formats.Request, []formats.Event) {
	evs := make([]reqtest.Event, len(events))
	for i, e := range events {
		evs[i] = reqtest.Event{Off: e.off, Kind: e.kind, Tok: e.tok}
	}
	return reqtest.Request(key, start, evs, usage)
}

const ms = reqtest.MS
