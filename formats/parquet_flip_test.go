package formats

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"
)

// The byte-flip test of written tables: TestTableByteFlips writes table
// sets with the writer, corrupts one file of a copy per mutation, and reads
// every mutant back in a child process (TestFlipChild: the test binary
// re-executed) under a 2 GiB address-space limit, so that a panic, a
// runtime fatal error (out of memory) or a hang is seen as the crash it is
// instead of taking the test down. Each read must end in an error or a
// clean read.
//
//	TOKENTRACE_FLIPS=2000      number of mutations (default 300; the
//	                           release run takes at least 1000)
//	TOKENTRACE_FLIP_SEED=7     seed of the mutations (default 1)
const (
	flipsEnv     = "TOKENTRACE_FLIPS"
	flipSeedEnv  = "TOKENTRACE_FLIP_SEED"
	flipChildEnv = "TOKENTRACE_FLIP_CHILD"  // the child's list of mutants
	flipLimitEnv = "TOKENTRACE_FLIP_RLIMIT" // the child limits its own address space
	flipSelfEnv  = "TOKENTRACE_FLIP_SELF"   // the child crashes on purpose: panic, oom
	flipASBytes  = 2 << 30                  // the address-space limit
	flipDefaultN = 300
)

// flipTables are the table sets the mutations are spread over: each
// compression the writer offers, the hive layout, and when DuckDB is
// installed (tools/duckdb-check) the zstd set rewritten by DuckDB with
// version 2 pages and delta encodings, as another tool writes them
// (without page checksums: corrupt values reach the decoders).
var flipTables = []struct {
	name string
	opt  WriteOptions
	duck bool
}{
	{"zstd", WriteOptions{}, false},
	{"snappy", WriteOptions{Compression: "snappy"}, false},
	{"none", WriteOptions{Compression: "none"}, false},
	{"hive", WriteOptions{Layout: LayoutHive}, false},
	{"duckdb-v2", WriteOptions{}, true},
}

// duckRewrite rewrites the flat tables of src into dst with DuckDB
// (version 2 pages, zstd); false when DuckDB is not installed.
func duckRewrite(t *testing.T, src, dst string) bool {
	t.Helper()
	if _, err := exec.LookPath("node"); err != nil {
		return false
	}
	if _, err := os.Stat(filepath.Join(duckdbCheckDir, "node_modules/@duckdb/node-api/package.json")); err != nil {
		return false
	}
	var sql strings.Builder
	for _, table := range fuzzTables {
		fmt.Fprintf(&sql, "COPY (SELECT * FROM %s) TO '%s' (FORMAT parquet, PARQUET_VERSION v2, COMPRESSION zstd);\n",
			table, filepath.Join(dst, table+".parquet"))
	}
	sqlFile := filepath.Join(t.TempDir(), "copy.sql")
	if err := os.WriteFile(sqlFile, []byte(sql.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	if b, err := exec.Command("node", filepath.Join(duckdbCheckDir, "run-sql.mjs"), src, sqlFile).CombinedOutput(); err != nil {
		t.Fatalf("run-sql.mjs: %v\n%s", err, b)
	}
	return true
}

// mutation is one corruption of one file of a table set.
type mutation struct {
	set  int    // index in flipTables
	file string // relative to the table directory
	off  int
	old  []byte
	new  []byte
}

func (m mutation) String() string {
	return fmt.Sprintf("%s/%s byte %d: % x -> % x", flipTables[m.set].name, m.file, m.off, m.old, m.new)
}

// mutate draws a corruption of data: half of them in the footer (where the
// lengths are), half anywhere; a flipped bit (60%), a random byte (20%) or
// 2 to 4 random bytes (20%, as a corrupt length or offset).
func mutate(rng *rand.Rand, data []byte) (off int, old, new []byte) {
	footer := int(binary.LittleEndian.Uint32(data[len(data)-8:])) + 8
	if footer > len(data) {
		footer = len(data)
	}
	if rng.IntN(2) == 0 {
		off = len(data) - footer + rng.IntN(footer)
	} else {
		off = rng.IntN(len(data))
	}
	n := 1
	if rng.IntN(5) == 0 {
		n = 2 + rng.IntN(3)
	}
	n = min(n, len(data)-off)
	old = slices.Clone(data[off : off+n])
	new = slices.Clone(old)
	switch r := rng.IntN(5); {
	case n > 1:
		for i := range new {
			new[i] = byte(rng.IntN(256))
		}
	case r < 3:
		new[0] ^= 1 << rng.IntN(8)
	default:
		new[0] = byte(rng.IntN(256))
	}
	return off, old, new
}

func TestTableByteFlips(t *testing.T) {
	n := flipDefaultN
	if v := os.Getenv(flipsEnv); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil || n < 1 {
			t.Fatalf("%s=%q: want a positive count", flipsEnv, v)
		}
	}
	seed := uint64(1)
	if v := os.Getenv(flipSeedEnv); v != "" {
		var err error
		if seed, err = strconv.ParseUint(v, 10, 64); err != nil {
			t.Fatalf("%s=%q: want an unsigned integer", flipSeedEnv, v)
		}
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	prlimit, _ := exec.LookPath("prlimit")
	work := t.TempDir()

	// The harness must see a crash as one, and the limit must hold.
	for _, self := range []string{"panic", "oom"} {
		res, err := runFlipChild(exe, prlimit, work, nil, self)
		if err != nil {
			t.Fatal(err)
		}
		if len(res.crashes) != 1 {
			t.Fatalf("self-test %q: the child's crash was not detected (%+v)", self, res)
		}
		t.Logf("self-test %q detected: %s", self, crashLine(res.crashes[0].stderr))
	}

	// The originals.
	type original struct {
		dir   string
		files map[string][]byte // relative path → content
		names []string
	}
	origs := make([]original, len(flipTables))
	for i, ft := range flipTables {
		dir := filepath.Join(work, "orig-"+ft.name)
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if ft.duck {
			src := filepath.Join(work, "src-"+ft.name)
			if err := os.Mkdir(src, 0o755); err != nil {
				t.Fatal(err)
			}
			writeSample(t, src, 20, ft.opt)
			if !duckRewrite(t, src, dir) {
				t.Logf("DuckDB not installed: no %s set", ft.name)
				origs[i].dir = ""
				continue
			}
		} else {
			writeSample(t, dir, 20, ft.opt)
		}
		o := original{dir: dir, files: map[string][]byte{}}
		err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			b, err := os.ReadFile(p)
			rel, _ := filepath.Rel(dir, p)
			o.files[rel] = b
			o.names = append(o.names, rel)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		slices.Sort(o.names)
		origs[i] = o
	}

	// The mutants, each a directory: the set with one file corrupted.
	rng := rand.New(rand.NewPCG(seed, 0x7ab1e5))
	muts := make([]mutation, n)
	dirs := make([]string, n)
	mutDirs := make([]string, n) // "mutant\toriginal"
	var sets []int               // the sets written
	for i, o := range origs {
		if o.dir != "" {
			sets = append(sets, i)
		}
	}
	for i := range muts {
		set := sets[i%len(sets)]
		o := origs[set]
		name := o.names[rng.IntN(len(o.names))]
		data := slices.Clone(o.files[name])
		off, old, new := mutate(rng, data)
		copy(data[off:], new)
		muts[i] = mutation{set, name, off, old, new}
		dirs[i] = filepath.Join(work, fmt.Sprintf("m%05d", i))
		mutDirs[i] = dirs[i] + "\t" + o.dir
		for _, other := range o.names {
			b := o.files[other]
			if other == name {
				b = data
			}
			p := filepath.Join(dirs[i], other)
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}

	// Two children at a time, each reading its share in order; a crash
	// ends a child, and the next one goes on after the crashing mutant.
	start := time.Now()
	var mu sync.Mutex
	total := flipResult{}
	var wg sync.WaitGroup
	var childErrs []error
	workers := 2
	for w := range workers {
		wg.Go(func() {
			var mine []int
			for i := w; i < n; i += workers {
				mine = append(mine, i)
			}
			for len(mine) > 0 {
				res, err := runFlipChild(exe, prlimit, work, dirsOf(mutDirs, mine), "")
				mu.Lock()
				if err != nil {
					childErrs = append(childErrs, err)
					mu.Unlock()
					return
				}
				total.clean += res.clean
				total.invalid += res.invalid
				total.errs += res.errs
				total.msgs = append(total.msgs, res.msgs...)
				for j, k := range res.altered {
					total.altered = append(total.altered, mine[k])
					total.alteredMsgs = append(total.alteredMsgs, fmt.Sprintf("mutation %d, %v: %s", mine[k], muts[mine[k]], res.alteredMsgs[j]))
				}
				for _, k := range res.recovered {
					total.recovered = append(total.recovered, mine[k])
				}
				for _, c := range res.crashes {
					c.index = mine[c.index]
					total.crashes = append(total.crashes, c)
				}
				mu.Unlock()
				if res.done >= len(mine) {
					break
				}
				mine = mine[res.done:]
			}
		})
	}
	wg.Wait()
	alteredDuck := 0
	for _, k := range total.altered {
		if flipTables[muts[k].set].duck {
			alteredDuck++
		}
	}
	for _, err := range childErrs {
		t.Error(err)
	}
	t.Logf("%d mutations (seed %d, %s=%d) in %s: %d rejected by validation, %d read errors after it (%d of them recovered panics), %d clean reads (%d of them with rows that differ from the original's in the sets tokentrace wrote, %d in DuckDB's, which has no page checksums), %d crashes",
		n, seed, flipsEnv, n, time.Since(start).Round(time.Millisecond), total.invalid, total.errs, len(total.recovered), total.clean,
		len(total.altered)-alteredDuck, alteredDuck, len(total.crashes))
	if os.Getenv("TOKENTRACE_FLIP_LOG") != "" {
		for _, m := range total.msgs {
			t.Log(m)
		}
		for _, m := range total.alteredMsgs {
			t.Log("altered: " + m)
		}
	}
	slices.Sort(total.recovered)
	for _, k := range total.recovered {
		t.Errorf("mutation %d (%s=%d %s=%d), %v: parquet-go panicked after the validation (recovered as an error): the validation misses this corruption",
			k, flipSeedEnv, seed, flipsEnv, n, muts[k])
	}
	for _, c := range total.crashes {
		t.Errorf("mutation %d (%s=%d %s=%d), %v: the reader crashed:\n%s",
			c.index, flipSeedEnv, seed, flipsEnv, n, muts[c.index], tail(c.stderr, 30))
	}
	if sum := total.clean + total.invalid + total.errs + len(total.crashes); sum != n {
		t.Errorf("%d outcomes for %d mutations", sum, n)
	}
	if n >= 100 && (total.invalid == 0 || total.clean == 0) {
		t.Errorf("no %s among %d mutations: the mutations miss the metadata or the data", map[bool]string{true: "rejection", false: "clean read"}[total.invalid == 0], n)
	}
}

func dirsOf(dirs []string, idx []int) []string {
	out := make([]string, len(idx))
	for i, k := range idx {
		out[i] = dirs[k]
	}
	return out
}

type flipCrash struct {
	index  int // in the child's list, then in the test's
	stderr string
}

type flipResult struct {
	clean, invalid, errs int
	done                 int      // mutants finished or crashed on, from the start of the list
	recovered            []int    // read errors that were parquet-go panics the readers recovered
	msgs                 []string // the read errors after the validation
	altered              []int    // clean reads whose rows differ from the original's
	alteredMsgs          []string
	crashes              []flipCrash
}

// runFlipChild reads the table directories dirs in one child process and
// returns the outcomes; the child stops at the first crash (done says how
// far it got, the crash included). self makes it crash on purpose.
func runFlipChild(exe, prlimit, work string, dirs []string, self string) (flipResult, error) {
	list, err := os.CreateTemp(work, "list-*")
	if err != nil {
		return flipResult{}, err
	}
	fmt.Fprintln(list, strings.Join(dirs, "\n"))
	list.Close()
	args := []string{"-test.run=^TestFlipChild$", "-test.count=1"}
	env := append(os.Environ(), flipChildEnv+"="+list.Name(), flipSelfEnv+"="+self, "GOMAXPROCS=2")
	var cmdPath string
	if prlimit != "" {
		cmdPath = prlimit
		args = append([]string{"--as=" + strconv.Itoa(flipASBytes), "--", exe}, args...)
	} else {
		cmdPath = exe
		env = append(env, flipLimitEnv+"=1")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute+time.Duration(len(dirs))*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, cmdPath, args...)
	cmd.Env = env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	runErr := cmd.Run()

	var res flipResult
	begun := -1
	sc := bufio.NewScanner(&stdout)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		f := strings.SplitN(sc.Text(), " ", 3)
		if len(f) < 2 {
			continue
		}
		i, err := strconv.Atoi(f[1])
		if err != nil {
			continue
		}
		switch f[0] {
		case "BEGIN":
			begun = i
		case "CLEAN":
			res.clean++
			res.done = i + 1
		case "ALTERED":
			res.clean++
			res.altered = append(res.altered, i)
			res.done = i + 1
			if len(f) > 2 {
				res.alteredMsgs = append(res.alteredMsgs, f[2])
			}
		case "INVALID":
			res.invalid++
			res.done = i + 1
		case "ERROR":
			res.errs++
			res.done = i + 1
			if len(f) > 2 {
				res.msgs = append(res.msgs, f[2])
			}
		case "RECOVERED":
			res.errs++
			res.recovered = append(res.recovered, i)
			res.done = i + 1
		}
	}
	if ctx.Err() != nil {
		stderr.WriteString("\n(killed: no answer within the time limit; a hang)")
	}
	if begun >= res.done || runErr != nil && res.done < len(dirs) {
		// died inside a read (panic, fatal error, signal) or before any
		res.crashes = append(res.crashes, flipCrash{index: max(begun, res.done), stderr: fmt.Sprintf("%v\n%s", runErr, stderr.String())})
		res.done = max(begun, res.done) + 1
	} else if runErr != nil {
		return res, fmt.Errorf("flip child: %v\n%s", runErr, stderr.String())
	}
	return res, nil
}

// TestFlipChild is the child of TestTableByteFlips: it reads each table
// directory of the list named by TOKENTRACE_FLIP_CHILD and prints, for
// the i-th, "BEGIN i" before and "CLEAN i", "INVALID i: <error>" (refused
// by the validation) or "ERROR i: <error>" after.
func TestFlipChild(t *testing.T) {
	list := os.Getenv(flipChildEnv)
	if list == "" {
		t.Skip("the child process of TestTableByteFlips")
	}
	if os.Getenv(flipLimitEnv) != "" {
		lim := syscall.Rlimit{Cur: flipASBytes, Max: flipASBytes}
		if err := syscall.Setrlimit(syscall.RLIMIT_AS, &lim); err != nil {
			t.Fatalf("limiting the address space: %v", err)
		}
	}
	b, err := os.ReadFile(list)
	if err != nil {
		t.Fatal(err)
	}
	switch os.Getenv(flipSelfEnv) {
	case "panic":
		fmt.Println("BEGIN 0")
		panic("self-test")
	case "oom":
		fmt.Println("BEGIN 0")
		var keep [][]byte
		for range 8 { // 4 GiB of address space, beyond the limit (not touched: no memory used)
			keep = append(keep, make([]byte, 512<<20))
		}
		runtime.KeepAlive(keep)
		fmt.Println("CLEAN 0")
		return
	}
	origs := map[string]*Collector{}
	for i, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		dir, orig, _ := strings.Cut(line, "\t")
		if dir == "" {
			continue
		}
		fmt.Printf("BEGIN %d\n", i)
		if err := validateDir(dir); err != nil {
			fmt.Printf("INVALID %d %s\n", i, oneLine(err))
			continue
		}
		var got Collector
		err := ReadTables(dir, &got)
		if err == nil {
			_, err = ReadRuns(dir)
		}
		switch {
		case err != nil && strings.Contains(err.Error(), panicked):
			fmt.Printf("RECOVERED %d %s\n", i, oneLine(err))
		case err != nil:
			fmt.Printf("ERROR %d %s\n", i, oneLine(err))
		default:
			want := origs[orig]
			if want == nil {
				want = new(Collector)
				if err := ReadTables(orig, want); err != nil {
					t.Fatal(err)
				}
				origs[orig] = want
			}
			if d := collectorDiff(want, &got); d != "" {
				fmt.Printf("ALTERED %d %s\n", i, d)
			} else {
				fmt.Printf("CLEAN %d\n", i)
			}
		}
	}
}

// collectorDiff describes the first difference between two collectors'
// rows, "" when equal.
func collectorDiff(want, got *Collector) string {
	if len(want.Runs) != len(got.Runs) || len(want.Requests) != len(got.Requests) || len(want.Events) != len(got.Events) {
		return fmt.Sprintf("row counts %d/%d/%d, want %d/%d/%d", len(got.Runs), len(got.Requests), len(got.Events),
			len(want.Runs), len(want.Requests), len(want.Events))
	}
	show := func(v any) string {
		b, _ := json.Marshal(v)
		return string(b)
	}
	for i := range want.Runs {
		if !reflect.DeepEqual(want.Runs[i], got.Runs[i]) {
			return fmt.Sprintf("run %d: %s, want %s", i, show(got.Runs[i]), show(want.Runs[i]))
		}
	}
	for i := range want.Requests {
		if !reflect.DeepEqual(want.Requests[i], got.Requests[i]) {
			return fmt.Sprintf("request %d: %s, want %s", i, show(got.Requests[i]), show(want.Requests[i]))
		}
	}
	for i := range want.Events {
		if !eventEqual(want.Events[i], got.Events[i]) {
			return fmt.Sprintf("event %d: %s, want %s", i, show(got.Events[i]), show(want.Events[i]))
		}
	}
	return ""
}

// validateDir runs checkTableFile on every table file of dir (either
// layout): the mutants it refuses count as caught by the validation.
func validateDir(dir string) error {
	return filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".parquet") {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		table, _, _ := strings.Cut(strings.TrimSuffix(rel, ".parquet"), string(filepath.Separator))
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		defer f.Close()
		st, err := f.Stat()
		if err != nil {
			return err
		}
		var want any
		switch table {
		case TableRuns:
			want = Run{}
		case TableRequests:
			want = Request{}
		case TableEvents:
			want = Event{}
		default:
			return errors.New("unknown table " + table)
		}
		_, err = checkTableFile(f, st.Size(), p, table, parquet.SchemaOf(want))
		return err
	})
}

func oneLine(err error) string { return strings.ReplaceAll(err.Error(), "\n", " ") }

// crashLine returns the line of a child's stderr that says how it died.
func crashLine(s string) string {
	for _, l := range strings.Split(s, "\n") {
		if strings.HasPrefix(l, "panic: ") || strings.HasPrefix(l, "fatal error: ") || strings.Contains(l, "out of memory") {
			return l
		}
	}
	return tail(s, 1)
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}
