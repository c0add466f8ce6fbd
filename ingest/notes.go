package ingest

// Notes collects an importer's remarks about one input file: the notes
// that go into a Run's Notes (Lines, in the order added), and the warnings
// among them, passed to Options.Warn as they are added.
//
// A warning is passed as "path: msg" — the note itself stays without the
// path (the run's SourceFiles name it), but a warning is printed among
// other files' — except through WarnNamed, for a message that names its
// file already (an *ingest.FormatError's text). Nothing is passed when
// Options.Warn is nil; the notes are kept all the same.
//
// An importer whose notes are per Run but whose warnings are per file (a
// file of several runs) can keep one Notes per file for the warnings
// (WarnOnly, with Once) and build each run's notes itself.
type Notes struct {
	// Lines are the notes added so far, for Run.Notes.
	Lines []string

	path   string
	warn   func(string)
	warned map[string]bool // non-nil under Once
}

// NewNotes returns an empty Notes whose warnings are about the file at
// path and go to opt.Warn.
func NewNotes(path string, opt Options) *Notes {
	return &Notes{path: path, warn: opt.Warn}
}

// Once makes n pass each distinct warning (msg, before the path is put in
// front) to Options.Warn only the first time: a remark repeated in every
// run of a file is warned once. The notes are kept every time. It returns
// n.
func (n *Notes) Once() *Notes {
	n.warned = map[string]bool{}
	return n
}

// Add records msg as a note only.
func (n *Notes) Add(msg string) {
	n.Lines = append(n.Lines, msg)
}

// Warn records msg as a note and passes "path: msg" to Options.Warn.
func (n *Notes) Warn(msg string) {
	n.Lines = append(n.Lines, msg)
	n.pass(msg, DisplayName(n.path)+": "+msg)
}

// WarnNamed records msg as a note and passes it to Options.Warn as it is:
// for a message that names its file itself (the text of an
// *ingest.FormatError about a companion file).
func (n *Notes) WarnNamed(msg string) {
	n.Lines = append(n.Lines, msg)
	n.pass(msg, msg)
}

// WarnOnly passes "path: msg" to Options.Warn without recording a note:
// for a remark the run's notes hold in another form or place.
func (n *Notes) WarnOnly(msg string) {
	n.pass(msg, DisplayName(n.path)+": "+msg)
}

// About returns a Notes, with no notes of its own, for the warnings about
// the file at path that shares n's Once record: a companion file whose
// remarks repeat the main file's is warned about once in all.
func (n *Notes) About(path string) *Notes {
	return &Notes{path: path, warn: n.warn, warned: n.warned}
}

// pass sends text (msg, prefixed or not) to Options.Warn; under Once, a msg
// already passed is not passed again.
func (n *Notes) pass(msg, text string) {
	if n.warn == nil {
		return
	}
	if n.warned != nil {
		if n.warned[msg] {
			return
		}
		n.warned[msg] = true
	}
	n.warn(text)
}
