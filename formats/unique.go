package formats

import "fmt"

// UniqueRuns wraps sink so that a run whose id an earlier input already
// used gets a fresh one ("id-2", "id-3", …): two inputs with the same run
// names are then two runs rather than one merged run. seen holds the ids
// used so far, shared by the wrappers of one command's inputs (each input
// gets its own wrapper); renamed, when not nil, is told of each renaming.
// Events follow their request's new id.
func UniqueRuns(sink Sink, seen map[string]bool, renamed func(orig, id string)) Sink {
	return &uniqueRuns{sink: sink, seen: seen, ids: map[string]string{}, renamed: renamed}
}

type uniqueRuns struct {
	sink    Sink
	seen    map[string]bool   // ids used by earlier inputs and this one
	ids     map[string]string // this input's id → id used
	renamed func(orig, id string)
}

func (r *uniqueRuns) id(orig string) string {
	if id, ok := r.ids[orig]; ok {
		return id
	}
	id := orig
	for n := 2; r.seen[id]; n++ {
		id = fmt.Sprintf("%s-%d", orig, n)
	}
	r.seen[id] = true
	r.ids[orig] = id
	if id != orig && r.renamed != nil {
		r.renamed(orig, id)
	}
	return id
}

func (r *uniqueRuns) ToolHint(tool string) { ToolHint(r.sink, tool) }

func (r *uniqueRuns) StartRun(run *Run) error {
	cp := *run
	cp.RunID = r.id(run.RunID)
	return StartRun(r.sink, &cp)
}

func (r *uniqueRuns) Batch(b *Batch) error {
	b.RunID = r.id(b.RunID)
	return r.sink.Batch(b)
}

func (r *uniqueRuns) Run(run *Run) error {
	cp := *run
	cp.RunID = r.id(run.RunID)
	return r.sink.Run(&cp)
}

// EventColumns implements EventColumnSelector for the wrapped sink. The
// run keeps its original id: the choice of columns does not depend on it,
// and renaming here would assign ids before the rows arrive.
func (r *uniqueRuns) EventColumns(run *Run) EventColumns { return EventColumnsOf(r.sink, run) }
