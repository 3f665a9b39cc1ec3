package dashboard_test

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

// chromium returns the path of a Chromium to drive, or skips the test:
// RATCHET_CHROMIUM, else chromium on the PATH (Debian's package; .ci/run
// installs it); without one it skips, and fails instead under CI=true.
func chromium(t *testing.T) string {
	if p := os.Getenv("RATCHET_CHROMIUM"); p != "" {
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
	t.Skip("no Chromium to drive (install Debian's chromium, or set RATCHET_CHROMIUM)")
	return ""
}

// TestBrowser drives a real headless Chromium: sign in through the form,
// retry the dead-letter queue through the confirmation, watch the
// operation finish by its refresh; no script error and no CSP violation
// on the way.
func TestBrowser(t *testing.T) {
	exe := chromium(t)
	if testing.Short() {
		t.Skip("a browser test")
	}
	e := newEnv(t)
	ids := e.failedJobs("charge", 3)

	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(exe), chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true), chromedp.NoFirstRun, chromedp.UserDataDir(t.TempDir()))
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancelAlloc()
	ctx, cancel := chromedp.NewContext(actx)
	defer cancel()
	ctx, cancelT := context.WithTimeout(ctx, 90*time.Second)
	defer cancelT()

	var mu sync.Mutex
	var problems []string
	require.NoError(t, chromedp.Listen(ctx, func(ev any) {
		mu.Lock()
		defer mu.Unlock()
		switch ev := ev.(type) {
		case *runtime.EventExceptionThrown:
			problems = append(problems, "exception: "+ev.ExceptionDetails.Text)
		case *log.EventEntryAdded:
			// (The first page answers 401 with the login form, by design.)
			if ev.Entry.Level == log.EntryLevelError && !strings.Contains(ev.Entry.Text, "401 (Unauthorized)") {
				problems = append(problems, "console: "+ev.Entry.Text)
			}
		}
	}))

	require.NoError(t, chromedp.Do(ctx,
		chromedp.Navigate(e.url("/dlq")),
		chromedp.WaitVisible(chromedp.CSS(`input[name="token"]`)),
		chromedp.SendKeys(chromedp.CSS(`input[name="token"]`), opToken),
		chromedp.Submit(chromedp.CSS(`input[name="token"]`)),
		chromedp.WaitVisible(`//a[contains(., "Retry all matching")]`),
	))
	title, err := chromedp.Run(ctx, chromedp.Title())
	require.NoError(t, err)
	assert.Contains(t, title, "Dead-letter queue")
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Click(`//a[contains(., "Retry all matching")]`),
		chromedp.WaitVisible(`//button[contains(., "Retry all matching")]`),
	))
	body, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(`main`)))
	require.NoError(t, err)
	assert.Contains(t, body, "Retry 3 jobs")
	require.NoError(t, chromedp.Do(ctx, chromedp.Click(`//button[contains(., "Retry all matching")]`)))
	// The operation's page refreshes itself until it is done.
	require.NoError(t, chromedp.Do(ctx, chromedp.WaitVisible(`//span[@id="op-state" and text()="done"]`)))
	for _, id := range ids {
		j, err := e.c.GetJob(e.ctx, id)
		require.NoError(t, err)
		assert.Equal(t, spi.StatusPending, j.Status)
	}
	mu.Lock()
	defer mu.Unlock()
	assert.Empty(t, problems, strings.Join(problems, "\n"))
}
