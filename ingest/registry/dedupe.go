package registry

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/tokentrace/tokentrace/formats"
	"github.com/tokentrace/tokentrace/ingest"
)

// CheckDuplicateInput is the warning of an input whose content was
// already read in the same command: the same file given twice, reached
// through two paths or a symlink, copied into two folders, or a
// tokentrace output folder holding the tables of a raw file that is read
// too. Read twice, its requests would count twice: compare and gate
// --baseline would see a sample twice its size and call noise
// significant.
const CheckDuplicateInput = "duplicate_input"

// DropDuplicates returns the jobs (and their labels, when labels is not
// empty) without those whose file has the size and SHA-256 of an earlier
// job's file or of a known file (the raw source files of the tables the
// command read: formats.Run.SourceFiles), with one warning to warn (when
// not nil) naming up to three of them. Only files whose size equals
// another's are hashed (a read of each); jobs read from standard input or
// a pipe are kept as they are; labels that do not match the jobs one
// for one are left for Import to refuse, with every job. A file that cannot be read is kept: its
// import reports the error.
func DropDuplicates(jobs []Job, labels []string, known []formats.SourceFile, warn func(string)) ([]Job, []string) {
	if len(labels) > 0 && len(labels) != len(jobs) {
		return jobs, labels // Import refuses them (ErrLabels)
	}
	bySize := map[int64]int{}
	for _, k := range known {
		if k.SHA256 != "" {
			bySize[k.Bytes]++
		}
	}
	size := make([]int64, len(jobs))
	for i, j := range jobs {
		size[i] = -1
		if j.input != nil {
			continue
		}
		if st, err := os.Stat(j.Path); err == nil && st.Mode().IsRegular() {
			size[i] = st.Size()
			bySize[size[i]]++
		}
	}
	first := map[string]string{} // size:digest → where it was first seen
	for _, k := range known {
		if k.SHA256 != "" {
			first[fmt.Sprintf("%d:%s", k.Bytes, k.SHA256)] = ingest.DisplayName(k.Path) + ", read from its tables"
		}
	}
	var keptJobs []Job
	var keptLabels []string
	var said []string
	dropped := 0
	for i, j := range jobs {
		if size[i] >= 0 && bySize[size[i]] > 1 {
			if sum, err := fileSHA256(j.Path); err == nil {
				key := fmt.Sprintf("%d:%s", size[i], sum)
				if where, dup := first[key]; dup {
					dropped++
					if len(said) < 3 {
						said = append(said, ingest.DisplayName(j.Path)+" (the content of "+where+")")
					}
					continue
				}
				first[key] = ingest.DisplayName(j.Path)
			}
		}
		keptJobs = append(keptJobs, j)
		if len(labels) > 0 {
			keptLabels = append(keptLabels, labels[i])
		}
	}
	if dropped > 0 && warn != nil {
		more := ""
		if dropped > len(said) {
			more = fmt.Sprintf(", and %d more", dropped-len(said))
		}
		warn(fmt.Sprintf("%s: %d input(s) have the content (size and SHA-256) of an input read before, and are read once: %s%s",
			CheckDuplicateInput, dropped, strings.Join(said, "; "), more))
	}
	return keptJobs, keptLabels
}

// fileSHA256 returns the lowercase hex SHA-256 of the file at path.
func fileSHA256(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
