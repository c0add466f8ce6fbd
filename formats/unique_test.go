package formats

import "testing"

// TestUniqueRuns: a second input with a run id the first used gets "-2"
// (its requests and events follow), a third "-3"; ids within one input
// keep their mapping; fresh ids pass unchanged.
func TestUniqueRuns(t *testing.T) {
	seen := map[string]bool{}
	var col Collector
	var notes []string
	note := func(o, n string) { notes = append(notes, o+"→"+n) }
	feed := func(s Sink, id string) {
		ev := []Event{{RunID: id}}
		if err := SendRow(s, &Request{RunID: id}, ev); err != nil {
			t.Fatal(err)
		}
		if err := s.Run(&Run{RunID: id}); err != nil {
			t.Fatal(err)
		}
	}
	feed(UniqueRuns(&col, seen, note), "a")
	second := UniqueRuns(&col, seen, note)
	feed(second, "a")
	feed(second, "b")
	feed(UniqueRuns(&col, seen, note), "a")
	var ids []string
	for _, r := range col.Runs {
		ids = append(ids, r.RunID)
	}
	want := []string{"a", "a-2", "b", "a-3"}
	for i := range want {
		if i >= len(ids) || ids[i] != want[i] {
			t.Fatalf("runs %v, want %v", ids, want)
		}
	}
	if col.Requests[1].RunID != "a-2" || col.Events[1].RunID != "a-2" {
		t.Errorf("request %q, event %q: want a-2", col.Requests[1].RunID, col.Events[1].RunID)
	}
	if len(notes) != 2 || notes[0] != "a→a-2" || notes[1] != "a→a-3" {
		t.Errorf("notes %v", notes)
	}
}
