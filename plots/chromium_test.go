package plots_test

import (
	"bytes"
	"context"
	"image"
	"image/png"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/tokentrace/tokentrace/plots"
	"github.com/tokentrace/tokentrace/synth"
)

// chromiumPath finds Debian's chromium (installed by .ci/run). Missing, the
// test skips locally and fails on CI (CI=true).
func chromiumPath(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("chromium missing on CI (.ci/run installs Debian's chromium)")
	}
	t.Skip("chromium missing; skipping the headless browser check of report.html")
	return ""
}

// TestHTMLInHeadlessChromium opens report.html (an AIPerf streaming run and
// the edited LLMPerf fixture whose model name, error text and label carry
// <script>) in headless Chromium: the page loads without console errors,
// requests nothing but its own file, shows the markup as text (no script
// element, title untouched), and renders a non-blank screenshot.
func TestHTMLInHeadlessChromium(t *testing.T) {
	bin := chromiumPath(t)
	dir := t.TempDir()
	page := filepath.Join(dir, "report.html")
	if err := os.WriteFile(page, htmlReport(t), 0o644); err != nil {
		t.Fatal(err)
	}
	pageURL := "file://" + page
	ctx, cancel := browser(t, bin, dir)
	defer cancel()
	checkPage(t, ctx, dir, pageURL, 5)
}

// browser starts headless Chromium with a profile in dir and opens a tab.
func browser(t *testing.T, bin, dir string) (context.Context, func()) {
	t.Helper()
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(bin),
		chromedp.Flag("headless", true),
		chromedp.Flag("no-sandbox", true),
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("no-first-run", true),
		chromedp.Flag("no-default-browser-check", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.Flag("disable-extensions", true),
		chromedp.UserDataDir(filepath.Join(dir, "profile")),
		chromedp.WindowSize(1280, 900),
	}
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	if err := chromedp.Do(ctx); err != nil { // start the browser, open the tab
		cancel()
		cancelA()
		t.Fatal(err)
	}
	return ctx, func() { cancel(); cancelA() }
}

// checkPage loads pageURL and checks it: no console problem, no request
// but the file, no script, the hostile strings of htmlReport as text (when
// xss), at least minSVG plots, a table of contents whose links resolve,
// hover titles, figures as wide as the page's column, a non-blank
// screenshot. It returns the time the navigation took (to the load
// event).
func checkPage(t *testing.T, ctx context.Context, dir, pageURL string, minSVG int) time.Duration {
	t.Helper()
	xss := minSVG == 5
	var mu sync.Mutex
	var requests, problems []string
	if err := chromedp.Listen(ctx, func(ev any) {
		mu.Lock()
		defer mu.Unlock()
		switch ev := ev.(type) {
		case *network.EventRequestWillBeSent:
			requests = append(requests, ev.Request.URL)
		case *runtime.EventConsoleAPICalled:
			if ev.Type == "error" || ev.Type == "warning" || ev.Type == "assert" {
				var args []string
				for _, a := range ev.Args {
					args = append(args, string(a.Value))
				}
				problems = append(problems, "console "+string(ev.Type)+": "+strings.Join(args, " "))
			}
		case *runtime.EventExceptionThrown:
			problems = append(problems, "exception: "+ev.ExceptionDetails.Text)
		case *log.EventEntryAdded:
			if ev.Entry.Level == "error" || ev.Entry.Level == "warning" {
				problems = append(problems, "log "+string(ev.Entry.Level)+": "+ev.Entry.Text+" "+ev.Entry.URL)
			}
		}
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Call(ctx, network.Enable, network.EnableParams{}); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Call(ctx, runtime.Enable, cdp.Empty{}); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Call(ctx, log.Enable, cdp.Empty{}); err != nil {
		t.Fatal(err)
	}
	tctx, cancelT := context.WithTimeout(ctx, 90*time.Second)
	defer cancelT()
	take := func() (req, prob []string) {
		mu.Lock()
		defer mu.Unlock()
		req, prob, requests, problems = requests, problems, nil, nil
		return req, prob
	}

	// Control: a page that logs an error and fetches from the network is
	// caught, so the checks below can fail.
	control := filepath.Join(dir, "control.html")
	if err := os.WriteFile(control, []byte(`<!DOCTYPE html><title>c</title><script>console.error("control error")</script><img src="http://127.0.0.1:9/x.png">`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(tctx, chromedp.Navigate("file://"+control), chromedp.Sleep(300*time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	req, prob := take()
	if !slices.Contains(req, "http://127.0.0.1:9/x.png") || !slices.ContainsFunc(prob, func(p string) bool { return strings.Contains(p, "control error") }) {
		t.Fatalf("the control page's request and console error were not seen: requests %v, problems %v", req, prob)
	}

	start := time.Now()
	if err := chromedp.Do(tctx, chromedp.Navigate(pageURL)); err != nil {
		t.Fatal(err)
	}
	loaded := time.Since(start)
	if err := chromedp.Do(tctx, chromedp.Sleep(300*time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	title, err := chromedp.Run(tctx, chromedp.Title())
	if err != nil {
		t.Fatal(err)
	}
	text, err := chromedp.Run(tctx, chromedp.Evaluate[string](`document.body.innerText`))
	if err != nil {
		t.Fatal(err)
	}
	counts, err := chromedp.Run(tctx, chromedp.Evaluate[[]int](`[document.querySelectorAll('script').length, document.querySelectorAll('img, iframe, object, embed').length, document.querySelectorAll('svg').length]`))
	if err != nil {
		t.Fatal(err)
	}
	shot, err := chromedp.Run(tctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatal(err)
	}
	req, prob = take()
	for _, p := range prob {
		t.Errorf("page problem: %s", p)
	}
	for _, u := range req {
		if u != pageURL {
			t.Errorf("page requested %s", u)
		}
	}
	if len(req) == 0 {
		t.Error("no request recorded at all (is network tracking working?)")
	}
	if title != "tokentrace report" {
		t.Errorf("title %q: a script from the trace ran", title)
	}
	if counts[0] != 0 || counts[1] != 0 {
		t.Errorf("%d script and %d img/iframe/object elements in the page", counts[0], counts[1])
	}
	if counts[2] < minSVG {
		t.Errorf("%d SVG plots rendered", counts[2])
	}
	// the table of contents' links resolve; hover titles exist; every
	// figure's plot is as wide as its figure (scaled to the column, which
	// is wider than the drawing's own 672 px in a 1280 px window)
	layout, err := chromedp.Run(tctx, chromedp.Evaluate[[]float64](`(() => {
		const links = [...document.querySelectorAll('nav a')];
		const broken = links.filter(a => !document.getElementById(a.getAttribute('href').slice(1))).length;
		const figs = [...document.querySelectorAll('figure')];
		const off = figs.filter(f => Math.abs(f.querySelector('svg').getBoundingClientRect().width - f.clientWidth) > 1).length;
		const minw = Math.min(...figs.map(f => f.querySelector('svg').getBoundingClientRect().width));
		return [links.length, broken, document.querySelectorAll('svg title').length, off, minw];
	})()`))
	if err != nil {
		t.Fatal(err)
	}
	if layout[0] < 5 || layout[1] != 0 {
		t.Errorf("table of contents: %v links, %v without a target", layout[0], layout[1])
	}
	if layout[2] < 10 {
		t.Errorf("%v hover titles in the plots", layout[2])
	}
	if layout[3] != 0 || layout[4] <= 700 {
		t.Errorf("%v figures narrower or wider than their column; the narrowest is %v px", layout[3], layout[4])
	}
	if !xss {
		return loaded
	}
	for _, want := range []string{
		"Llama-2-7b-chat-hf<script>document.title='pwned-model'</script>",
		"<script>document.title='pwned-error'</script><img src=x onerror=alert(1)> Bad Gateway",
		"run<script>document.title='pwned-label'</script>",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("the page does not show %q as text", want)
		}
	}
	img, err := png.Decode(bytes.NewReader(shot))
	if err != nil {
		t.Fatal(err)
	}
	if frac := nonBackground(img); frac < 0.01 {
		t.Errorf("screenshot is blank: %.4f of pixels differ from the top-left colour", frac)
	}
	return loaded
}

// nonBackground is the fraction of pixels whose colour differs from the
// top-left pixel's.
func nonBackground(img image.Image) float64 {
	b := img.Bounds()
	r0, g0, b0, _ := img.At(b.Min.X, b.Min.Y).RGBA()
	diff, all := 0, 0
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			if r != r0 || g != g0 || bl != b0 {
				diff++
			}
			all++
		}
	}
	return float64(diff) / float64(all)
}

// largeRunRequests is the size of the run TestHTMLLargeRun draws.
const largeRunRequests = 100_000

// TestHTMLLargeRun: a synthetic AIPerf run of 100,000 requests (every plot
// kind; 1% failed) gives a report.html of a few MB — per-request points
// past the thresholds become bands or thinned series (README.md "Large
// runs") — that headless Chromium loads within seconds. The size is
// checked without Chromium too.
func TestHTMLLargeRun(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the 100,000-request run takes a while")
	}
	dir := t.TempDir()
	m := synth.Default()
	m.Requests, m.OSLMedian, m.OSLMin, m.FailureRate, m.Seed = largeRunRequests, 8, 2, 0.01, 5
	run := filepath.Join(dir, "large-run")
	if err := os.Mkdir(run, 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(filepath.Join(run, "profile_export.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if err := synth.WriteAIPerf(f, io.Discard, m); err != nil {
		t.Fatal(err)
	}
	f.Close()
	start := time.Now()
	_, inputs, slo := load(t, "ttft<=500ms,e2e<=3s", nil, run)
	set, err := plots.Build(inputs, slo, plots.Kinds)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := plots.WriteHTML(&b, inputs, set); err != nil {
		t.Fatal(err)
	}
	built := time.Since(start)
	page := filepath.Join(dir, "report.html")
	if err := os.WriteFile(page, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d requests: report.html %.2f MB, %d figures, import+report+plots %v", largeRunRequests, float64(b.Len())/(1<<20), len(set.Figures), built.Round(time.Millisecond))
	if b.Len() > 4<<20 {
		t.Errorf("report.html is %.1f MB for %d requests, want at most 4 MB", float64(b.Len())/(1<<20), largeRunRequests)
	}
	if !bytes.Contains(b.Bytes(), []byte("P10–P90 of E2E in")) {
		t.Error("e2e-osl of 100,000 requests is not drawn as quantile bands")
	}
	bin := chromiumPath(t)
	ctx, cancel := browser(t, bin, dir)
	defer cancel()
	loaded := checkPage(t, ctx, dir, "file://"+page, 8)
	t.Logf("Chromium loaded it in %v", loaded.Round(time.Millisecond))
	if loaded > 10*time.Second {
		t.Errorf("Chromium took %v to load report.html of %d requests, want under 10 s", loaded, largeRunRequests)
	}
}
