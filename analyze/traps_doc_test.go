package analyze

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/tokentrace/tokentrace/convention"
	"github.com/tokentrace/tokentrace/internal/golden"
)

// TestTrapsDoc checks that TRAPS.md's catalogue is the one the code
// generates (rewrite with -update) and that every entry is complete: a
// unique code, tools, title, signature, action, effect, metrics, a public
// source, and a test that exists (a func of that name in the named
// package's test files).
func TestTrapsDoc(t *testing.T) {
	traps := tools.Traps()
	if len(traps) < 3 {
		t.Fatalf("%d traps in the catalogue", len(traps))
	}
	seen := map[string]bool{}
	for _, tr := range traps {
		if seen[tr.Code] {
			t.Errorf("code %s twice", tr.Code)
		}
		seen[tr.Code] = true
		if !regexp.MustCompile(`^[a-z0-9_]+$`).MatchString(tr.Code) {
			t.Errorf("code %q: want snake_case", tr.Code)
		}
		for name, v := range map[string]string{"Tools": tr.Tools, "Title": tr.Title, "Signature": tr.Signature, "Effect": tr.Effect, "Source": tr.Source, "Test": tr.Test} {
			if strings.TrimSpace(v) == "" {
				t.Errorf("%s: no %s", tr.Code, name)
			}
		}
		switch tr.Action {
		case convention.ActionCorrect, convention.ActionNull, convention.ActionFlag, convention.ActionExplain, convention.ActionReject:
		default:
			t.Errorf("%s: action %q", tr.Code, tr.Action)
		}
		if len(tr.Metrics) == 0 {
			t.Errorf("%s: no metrics", tr.Code)
		}
		if tr.Action == convention.ActionExplain && tr.Fix != convention.FixNone {
			t.Errorf("%s: an explanation with a fix", tr.Code)
		}
		checkTestExists(t, tr)
	}

	doc, err := os.ReadFile("TRAPS.md")
	if err != nil {
		t.Fatal(err)
	}
	s := string(doc)
	i, j := strings.Index(s, convention.CatalogueBegin), strings.Index(s, convention.CatalogueEnd)
	if i < 0 || j < i {
		t.Fatal("TRAPS.md lacks the catalogue markers")
	}
	want := convention.Catalogue(traps)
	if golden.Update() {
		s = s[:i+len(convention.CatalogueBegin)] + "\n" + want + s[j:]
		if err := os.WriteFile("TRAPS.md", []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if got := strings.TrimSpace(s[i+len(convention.CatalogueBegin) : j]); got != strings.TrimSpace(want) {
		t.Error("TRAPS.md's catalogue differs from the code's (go test ./analyze -run TestTrapsDoc -update)")
	}
}

// checkTestExists finds tr.Test ("package/dir TestName") in the module.
func checkTestExists(t *testing.T, tr convention.Trap) {
	t.Helper()
	pkg, name, ok := strings.Cut(tr.Test, " ")
	if !ok || !strings.HasPrefix(name, "Test") {
		t.Errorf("%s: test %q: want \"package/dir TestName\"", tr.Code, tr.Test)
		return
	}
	files, _ := filepath.Glob(filepath.Join("..", pkg, "*_test.go"))
	decl := regexp.MustCompile(`(?m)^func ` + regexp.QuoteMeta(name) + `\(t \*testing\.T\)`)
	for _, f := range files {
		if b, err := os.ReadFile(f); err == nil && decl.Match(b) {
			return
		}
	}
	t.Errorf("%s: test %s not found in %s", tr.Code, name, pkg)
}
