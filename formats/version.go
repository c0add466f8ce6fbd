package formats

import (
	"runtime/debug"
	"strings"
)

// Version is tokentrace's version, written to Run.TokentraceVersion and
// Parquet metadata, and printed by `tokentrace version` and `--version`.
//
// A release sets it at link time:
//
//	-ldflags "-X github.com/tokentrace/tokentrace/formats.Version=1.2.3"
//
// When nothing set it (still DevVersion), it is taken from the build
// information Go records in the binary (BuildVersion): the module version
// of `go install github.com/tokentrace/tokentrace/cmd/tokentrace@v1.2.3`
// ("1.2.3"), or the version Go derives from the git checkout it was built
// in ("0.0.0-20261202005750-7266406abcde+dirty"); a build without either
// (go test, a source tree without git) keeps DevVersion.
var Version = DevVersion

// DevVersion is Version when neither -ldflags nor the build information
// says more.
const DevVersion = "0.1.0-dev"

// modulePath is tokentrace's module path, looked up in the build
// information.
const modulePath = "github.com/tokentrace/tokentrace"

func init() {
	if info, ok := debug.ReadBuildInfo(); ok {
		Version = BuildVersion(Version, info)
	}
}

// BuildVersion returns the version to report given linked, the version
// set at link time (DevVersion when none was), and the binary's build
// information: linked when it is not DevVersion; else the version of
// tokentrace's module in info — the main module's, or a dependency's when
// another program links tokentrace as a library (its replacement's when
// replaced) — without its leading "v"; else DevVersion. "(devel)", Go's
// word for an unversioned main module, is no version.
func BuildVersion(linked string, info *debug.BuildInfo) string {
	if linked != DevVersion || info == nil {
		return linked
	}
	v := ""
	if info.Main.Path == modulePath {
		v = info.Main.Version
	} else {
		for _, d := range info.Deps {
			if d.Path == modulePath {
				v = d.Version
				if d.Replace != nil {
					v = d.Replace.Version
				}
				break
			}
		}
	}
	if v == "" || v == "(devel)" {
		return linked
	}
	return strings.TrimPrefix(v, "v")
}
