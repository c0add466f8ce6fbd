package plots_test

import (
	"bytes"
	"context"
	"image"
	"image/png"
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
	defer cancelA()
	ctx, cancel := chromedp.NewContext(actx)
	defer cancel()
	if err := chromedp.Do(ctx); err != nil { // start the browser, open the tab
		t.Fatal(err)
	}
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

	if err := chromedp.Do(tctx, chromedp.Navigate(pageURL), chromedp.Sleep(300*time.Millisecond)); err != nil {
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
	if counts[2] < 5 {
		t.Errorf("%d SVG plots rendered", counts[2])
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
