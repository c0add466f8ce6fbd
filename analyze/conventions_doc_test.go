package analyze

import (
	"os"
	"strings"
	"testing"

	"github.com/tokentrace/tokentrace/convention"
	"github.com/tokentrace/tokentrace/internal/golden"
)

// TestConventionsDoc checks that CONVENTIONS.md's table is the one the code
// generates (rewrite with -update), that it names every profile, and that
// no cell is empty: every choice of every profile has a value and a source.
func TestConventionsDoc(t *testing.T) {
	doc, err := os.ReadFile("CONVENTIONS.md")
	if err != nil {
		t.Fatal(err)
	}
	s := string(doc)
	i, j := strings.Index(s, convention.TableBegin), strings.Index(s, convention.TableEnd)
	if i < 0 || j < i {
		t.Fatal("CONVENTIONS.md lacks the table markers")
	}
	want := convention.Table(tools.Profiles())
	got := strings.TrimSpace(s[i+len(convention.TableBegin) : j])
	if golden.Update() {
		s = s[:i+len(convention.TableBegin)] + "\n" + want + s[j:]
		if err := os.WriteFile("CONVENTIONS.md", []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
		got = strings.TrimSpace(want)
	}
	if got != strings.TrimSpace(want) {
		t.Fatal("CONVENTIONS.md's table differs from the profiles (analyze.Canonical and ingest/<tool>/profile.go) (go test ./analyze -run TestConventionsDoc -update)")
	}
	for _, c := range tools.Profiles() {
		if !strings.Contains(got, "`"+c.Name+"`") {
			t.Errorf("profile %s missing from the table", c.Name)
		}
		for _, name := range convention.ChoiceNames() {
			if strings.TrimSpace(c.Sources[name]) == "" {
				t.Errorf("profile %s: choice %s has no source", c.Name, name)
			}
			if c.Choices()[name] == "" {
				t.Errorf("profile %s: choice %s has no value", c.Name, name)
			}
		}
		if len(c.Sources) != len(convention.ChoiceNames()) {
			t.Errorf("profile %s: %d sources for %d choices", c.Name, len(c.Sources), len(convention.ChoiceNames()))
		}
	}
	for _, line := range strings.Split(got, "\n") {
		if strings.Contains(line, "| |") || strings.Contains(line, "``") || strings.Contains(line, "<br> |") {
			t.Errorf("empty cell in row %.60s…", line)
		}
	}
}
