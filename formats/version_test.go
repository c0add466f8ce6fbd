package formats

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
)

func TestBuildVersion(t *testing.T) {
	main := func(v string) *debug.BuildInfo {
		return &debug.BuildInfo{Main: debug.Module{Path: modulePath, Version: v}}
	}
	lib := &debug.BuildInfo{Main: debug.Module{Path: "example.com/app", Version: "v9.9.9"},
		Deps: []*debug.Module{{Path: "example.com/other", Version: "v1.0.0"}, {Path: modulePath, Version: "v0.3.1"}}}
	replaced := &debug.BuildInfo{Main: debug.Module{Path: "example.com/app"},
		Deps: []*debug.Module{{Path: modulePath, Version: "v0.3.1", Replace: &debug.Module{Path: "../tokentrace", Version: ""}}}}
	for _, c := range []struct {
		name, linked string
		info         *debug.BuildInfo
		want         string
	}{
		{"-ldflags wins", "1.2.3", main("v1.4.0"), "1.2.3"},
		{"go install @version", DevVersion, main("v1.4.0"), "1.4.0"},
		{"git checkout build", DevVersion, main("v0.0.0-20261202005750-7266406abcde+dirty"), "0.0.0-20261202005750-7266406abcde+dirty"},
		{"go test, no vcs", DevVersion, main("(devel)"), DevVersion},
		{"no version", DevVersion, main(""), DevVersion},
		{"linked as a library", DevVersion, lib, "0.3.1"},
		{"replaced by a local copy", DevVersion, replaced, DevVersion},
		{"no build info", DevVersion, nil, DevVersion},
	} {
		if got := BuildVersion(c.linked, c.info); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}

// TestVersionOfBuiltBinary builds tokentrace as `go build` in a git clone
// does and runs `tokentrace version`: the version Go recorded from git (a
// pseudo-version naming the commit), not the constant. (-ldflags -X is
// checked where the release files use it: cmd/tokentrace/release_test.go.)
func TestVersionOfBuiltBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the CLI")
	}
	rev, err := exec.Command("git", "rev-parse", "--short=12", "HEAD").Output()
	if err != nil {
		t.Skipf("not a git checkout: %v", err)
	}
	// Go records git information only where .git is a directory (not in
	// a `git worktree`, whose .git is a file).
	if st, err := os.Stat("../.git"); err != nil || !st.IsDir() {
		t.Skip("../.git is not a directory (a git worktree): Go records no git information here; a clone runs this")
	}
	bin := filepath.Join(t.TempDir(), "tokentrace")
	build := exec.Command("go", "build", "-o", bin, "../cmd/tokentrace")
	// -buildvcs=auto is Go's default; GOFLAGS=-buildvcs=false in the
	// environment or in go env (as on some machines) would hide the case
	build.Env = append(os.Environ(), "GOFLAGS=-buildvcs=auto")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	out, err := exec.Command(bin, "version").Output()
	if err != nil {
		t.Fatal(err)
	}
	if want := strings.TrimSpace(string(rev)); !strings.Contains(string(out), want) || strings.Contains(string(out), DevVersion) {
		t.Errorf("%q, want the commit %s in it", out, want)
	}
}
