package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	cdplog "github.com/chromedp/cdproto/log"
	cdpruntime "github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratchet-go/ratchet/dashboard"
	"github.com/ratchet-go/ratchet/engine"
	ratchet "github.com/ratchet-go/ratchet/sdk"
	"github.com/ratchet-go/ratchet/sdk/spi"
	"github.com/ratchet-go/ratchet/stores/sqlite"
)

// chromiumPath returns the Chromium to drive: RATCHET_TEST_CHROMIUM, else one
// on the PATH (Debian's chromium, which .ci/run installs). Without one the
// test skips, and fails instead under CI=true.
func chromiumPath(t *testing.T) string {
	if p := os.Getenv("RATCHET_TEST_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("no Chromium on the PATH: .ci/run installs Debian's chromium package")
	}
	t.Skip("no Chromium to drive (apt-get install chromium, or set RATCHET_TEST_CHROMIUM)")
	return ""
}

// The dashboard in a real headless Chromium, over a node that runs the
// jobs: an operator signs in, filters the dead-letter queue to one task,
// retries everything that matches through the confirmation, watches the
// operation finish, and sees the node run the retried jobs to SUCCEEDED
// while the other task's dead letters stay where they were; no script
// error and no CSP violation on the way. The test
// saves a screenshot of the overview (in its artifact directory: go test
// -artifacts; and in RATCHET_TEST_SCREENSHOT_DIR when that is set).
func TestDashboardInBrowser(t *testing.T) {
	exe := chromiumPath(t)
	ctx := context.Background()
	store, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "ratchet.db"), sqlite.Options{Create: true})
	require.NoError(t, err)
	defer store.Close()

	var broken atomic.Bool
	broken.Store(true)
	charge := ratchet.NewVoidTask("payments.charge", func(ctx context.Context, a struct{ N int }) error {
		if broken.Load() {
			return ratchet.DoNotRetry(fmt.Errorf("charge %d: the payment gateway refused the card", a.N))
		}
		return nil
	})
	email := ratchet.NewVoidTask("email.send", func(ctx context.Context, a struct{ N int }) error {
		return ratchet.DoNotRetry(errors.New("no such mailbox"))
	})
	eng, err := engine.New(store, engine.Options{
		Client:       ratchet.ClientOptions{MaskPayloads: true, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))},
		Concurrency:  4,
		PollInterval: 50 * time.Millisecond,
	}, charge, email)
	require.NoError(t, err)
	events, unsubscribe := eng.Subscribe(1000)
	defer unsubscribe()
	require.NoError(t, eng.Start(ctx))
	defer func() { _ = eng.Stop(ctx) }()

	const charges, emails = 12, 5
	var chargeArgs, emailArgs []struct{ N int }
	for i := range charges {
		chargeArgs = append(chargeArgs, struct{ N int }{i})
	}
	for i := range emails {
		emailArgs = append(emailArgs, struct{ N int }{i})
	}
	chargeIDs, err := charge.SubmitMany(ctx, eng.Client(), chargeArgs)
	require.NoError(t, err)
	emailIDs, err := email.SubmitMany(ctx, eng.Client(), emailArgs)
	require.NoError(t, err)
	awaitEvents(t, events, engine.EventFailed, charges+emails)
	broken.Store(false) // the gateway is back: a retry succeeds

	const token = "browser-t0ken"
	h, err := dashboard.New(eng.Client(), dashboard.Options{
		Prefix:      "/ops",
		Credentials: []dashboard.Credential{{Name: "alice", Token: token, Role: dashboard.RoleOperator}},
		Breakers:    eng.Breakers,
		SampleEvery: 200 * time.Millisecond,
	})
	require.NoError(t, err)
	defer h.Close()
	srv := httptest.NewServer(h)
	defer srv.Close()
	base := srv.URL + "/ops"

	bctx := browser(t, exe, 1400, 1000, 2*time.Minute)
	// No script error and no Content-Security-Policy violation on the way
	// (the first page answers 401 with the login form, by design).
	problems := watchProblems(t, bctx)

	// Sign in (the first page answers 401 with the login form), then
	// filter the dead-letter queue to one task.
	var body string
	require.NoError(t, chromedp.Do(bctx,
		chromedp.Navigate(base+"/dlq"),
		chromedp.WaitVisible(chromedp.CSS(`input[name="token"]`)),
		chromedp.SendKeys(chromedp.CSS(`input[name="token"]`), token),
		chromedp.Submit(chromedp.CSS(`input[name="token"]`)),
		chromedp.WaitVisible(chromedp.CSS(`form.filters input[name="task"]`)),
		chromedp.SendKeys(chromedp.CSS(`form.filters input[name="task"]`), "payments.charge"),
		chromedp.Submit(chromedp.CSS(`form.filters input[name="task"]`)),
		// The filtered page's own bulk link (the unfiltered page has one too,
		// without the task: waiting for that would read the page before).
		chromedp.WaitVisible(chromedp.CSS(`a[href*="task=payments.charge"]`)),
	))
	body = mainText(t, bctx)
	for _, id := range chargeIDs {
		assert.Contains(t, body, id.String()[28:], "the filtered DLQ lists every failed charge")
	}
	for _, id := range emailIDs {
		assert.NotContains(t, body, id.String()[28:], "the filter leaves the e-mails out")
	}

	// Retry everything that matches, through the confirmation.
	require.NoError(t, chromedp.Do(bctx,
		chromedp.Click(`//a[contains(., "Retry all matching")]`),
		chromedp.WaitVisible(`//button[contains(., "Retry all matching")]`),
	))
	body = mainText(t, bctx)
	assert.Contains(t, body, fmt.Sprintf("Retry %d jobs", charges))
	require.NoError(t, chromedp.Do(bctx,
		chromedp.Click(`//button[contains(., "Retry all matching")]`),
		chromedp.WaitVisible(`//span[@id="op-state" and text()="done"]`),
	))
	body = mainText(t, bctx)
	assert.Contains(t, body, fmt.Sprintf("%d", charges))

	// The node runs them: each retried charge succeeds.
	awaitEvents(t, events, engine.EventSucceeded, charges)
	require.NoError(t, chromedp.Do(bctx,
		chromedp.Navigate(base+"/jobs?task=payments.charge&status=SUCCEEDED"),
		chromedp.WaitVisible(chromedp.CSS(`table`)),
	))
	body = mainText(t, bctx)
	for _, id := range chargeIDs {
		assert.Contains(t, body, id.String()[28:], "every retried charge is listed SUCCEEDED")
	}
	for _, id := range emailIDs {
		j, err := eng.Client().GetJob(ctx, id)
		require.NoError(t, err)
		assert.Equal(t, spi.StatusFailed, j.Status, "the e-mails were not retried")
	}

	// The overview, and the screenshot.
	require.NoError(t, chromedp.Do(bctx,
		chromedp.Navigate(base+"/"),
		chromedp.WaitVisible(chromedp.CSS(`main`)),
	))
	body = mainText(t, bctx)
	png, err := chromedp.Run(bctx, chromedp.FullScreenshot(100)) // 100: a PNG
	require.NoError(t, err)
	assert.Contains(t, body, "SUCCEEDED")
	require.NotEmpty(t, png)
	seen := problems.take()
	assert.Empty(t, seen, strings.Join(seen, "\n"))
	dirs := []string{t.ArtifactDir()}
	if d := os.Getenv("RATCHET_TEST_SCREENSHOT_DIR"); d != "" {
		dirs = append(dirs, d)
	}
	for _, d := range dirs {
		path := filepath.Join(d, "dashboard-overview.png")
		require.NoError(t, os.WriteFile(path, png, 0o644))
		t.Logf("screenshot: %s", path)
	}
}

// mainText returns the text of the page's main element.
func mainText(t *testing.T, ctx context.Context) string {
	t.Helper()
	s, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(`main`)))
	require.NoError(t, err)
	return s
}

// awaitEvents waits for n events of kind, failing the test after a minute.
func awaitEvents(t *testing.T, events <-chan engine.Event, kind engine.EventKind, n int) {
	t.Helper()
	timeout := time.After(time.Minute)
	for seen := 0; seen < n; {
		select {
		case ev := <-events:
			if ev.Kind == kind {
				seen++
			}
		case <-timeout:
			t.Fatalf("%d of %d %v events within a minute", seen, n, kind)
		}
	}
}

// browser starts a headless Chromium with a window of width×height and
// returns a tab's context, which ends after timeout or with the test.
func browser(t *testing.T, exe string, width, height int, timeout time.Duration) context.Context {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(exe), chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true), chromedp.NoFirstRun, chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(width, height))
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	t.Cleanup(cancelAlloc)
	bctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(cancel)
	bctx, cancelT := context.WithTimeout(bctx, timeout)
	t.Cleanup(cancelT)
	return bctx
}

// pageProblems are a tab's script exceptions and console errors (a
// Content-Security-Policy violation is one), but for the 401 that the
// sign-in page answers by design.
type pageProblems struct {
	mu   sync.Mutex
	list []string
}

// watchProblems records the problems of the tab bctx.
func watchProblems(t *testing.T, bctx context.Context) *pageProblems {
	t.Helper()
	p := &pageProblems{}
	require.NoError(t, chromedp.Listen(bctx, func(ev any) {
		p.mu.Lock()
		defer p.mu.Unlock()
		switch ev := ev.(type) {
		case *cdpruntime.EventExceptionThrown:
			p.list = append(p.list, "exception: "+ev.ExceptionDetails.Text)
		case *cdplog.EventEntryAdded:
			if ev.Entry.Level == cdplog.EntryLevelError && !strings.Contains(ev.Entry.Text, "401 (Unauthorized)") {
				p.list = append(p.list, "console: "+ev.Entry.Text)
			}
		}
	}))
	return p
}

// take returns the problems recorded since the last take.
func (p *pageProblems) take() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := p.list
	p.list = nil
	return out
}
