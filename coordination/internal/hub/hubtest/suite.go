package hubtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"io"
	"log/slog"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jonboulle/clockwork"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratchet-go/ratchet/coordination/internal/hub"
	"github.com/ratchet-go/ratchet/engine"
	ratchet "github.com/ratchet-go/ratchet/sdk"
	"github.com/ratchet-go/ratchet/sdk/spi"
	"github.com/ratchet-go/ratchet/stores/sqlite"
)

// Harness connects a transport to the suite.
type Harness struct {
	// Name names the server in skip messages ("Redis", "NATS").
	Name string
	// Addr is the server's host:port.
	Addr string
	// New returns a coordinator of cluster connected to addr (host:port:
	// the server, or a Proxy before it) and logging to log, with its hub;
	// it returns once its subscription is confirmed.
	New func(ctx context.Context, addr, cluster string, log *slog.Logger) (spi.ClusterCoordinator, *hub.Hub, error)
}

// wait bounds every wait of the suite: long enough for a loaded CI
// machine, and each is cut short by the channel it waits on.
const wait = 10 * time.Second

// Run runs the suite against the harness's server (skipped, or failed
// under CI=true, when it is unreachable).
func Run(t *testing.T, h Harness) {
	Reachable(t, h.Name, h.Addr)
	t.Run("SeeEachOther", func(t *testing.T) { seeEachOther(t, h) })
	t.Run("ClaimsNotice", func(t *testing.T) { claimsNotice(t, h) })
	t.Run("WaitJobNotices", func(t *testing.T) { waitJobNotices(t, h) })
	t.Run("PublishBeforeClose", func(t *testing.T) { publishBeforeClose(t, h) })
	t.Run("ClustersApart", func(t *testing.T) { clustersApart(t, h) })
	t.Run("CloseTwice", func(t *testing.T) { closeTwice(t, h) })
	t.Run("BlockedListener", func(t *testing.T) { blockedListener(t, h) })
	t.Run("Outage", func(t *testing.T) { outage(t, h) })
	t.Run("UnreachableAtStart", func(t *testing.T) { unreachableAtStart(t, h) })
	t.Run("TwoEngines", func(t *testing.T) { twoEngines(t, h) })
	t.Run("WaitJobAcrossEngines", func(t *testing.T) { waitJobAcrossEngines(t, h) })
}

// Cluster returns a fresh cluster name, so that runs sharing a server
// (and the other tests on it) stay apart.
func Cluster(t testing.TB) string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return "test-" + hex.EncodeToString(b[:])
}

func open(t *testing.T, h Harness, addr, cluster string, log *slog.Logger) (spi.ClusterCoordinator, *hub.Hub) {
	t.Helper()
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	c, hb, err := h.New(ctx, addr, cluster, log)
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	return c, hb
}

// recorder is a fast listener that keeps the wakeups it hears.
type recorder struct{ ch chan spi.WakeupHint }

func listen(c spi.ClusterCoordinator) *recorder {
	r := &recorder{ch: make(chan spi.WakeupHint, 4096)}
	c.RegisterWakeupListener(func(w spi.WakeupHint) {
		select {
		case r.ch <- w:
		default:
		}
	})
	return r
}

// from waits for a wakeup of source and returns it.
func (r *recorder) from(t *testing.T, source string) spi.WakeupHint {
	t.Helper()
	deadline := time.After(wait)
	for {
		select {
		case w := <-r.ch:
			if w.Source == source {
				return w
			}
		case <-deadline:
			t.Fatalf("no wakeup from %q within %s", source, wait)
		}
	}
}

func seeEachOther(t *testing.T, h Harness) {
	cluster := Cluster(t)
	a, _ := open(t, h, h.Addr, cluster, nil)
	b, _ := open(t, h, h.Addr, cluster, nil)
	ra, rb := listen(a), listen(b)
	ctx := context.Background()

	a.NotifyNewWork(ctx, spi.PriorityHigh, "node-a")
	assert.Equal(t, spi.WakeupHint{Priority: spi.PriorityHigh, Source: "node-a"}, rb.from(t, "node-a"))
	// A node hears its own wakeups too (the engine ignores them by Source).
	assert.Equal(t, spi.WakeupHint{Priority: spi.PriorityHigh, Source: "node-a"}, ra.from(t, "node-a"))

	b.NotifyNewWork(ctx, spi.PriorityLowest, "node-b")
	assert.Equal(t, spi.WakeupHint{Priority: spi.PriorityLowest, Source: "node-b"}, ra.from(t, "node-b"))
}

// claimsNotice: a cancel's notice (spi.ClaimsPublisher) reaches the other
// node as a wakeup with CheckClaims.
func claimsNotice(t *testing.T, h Harness) {
	cluster := Cluster(t)
	a, _ := open(t, h, h.Addr, cluster, nil)
	b, _ := open(t, h, h.Addr, cluster, nil)
	rb := listen(b)
	p, ok := a.(spi.ClaimsPublisher)
	require.True(t, ok, "the coordinator carries claims notices (spi.ClaimsPublisher)")
	p.NotifyClaimsChanged(context.Background(), "node-a")
	assert.Equal(t, spi.WakeupHint{Source: "node-a", CheckClaims: true}, rb.from(t, "node-a"))
}

// waitJobNotices: WaitJob's notices (spi.FinishPublisher) reach the other
// node, a long list in chunks of spi.MaxNoticeIDs ids.
func waitJobNotices(t *testing.T, h Harness) {
	cluster := Cluster(t)
	a, _ := open(t, h, h.Addr, cluster, nil)
	b, _ := open(t, h, h.Addr, cluster, nil)
	rb := listen(b)
	p, ok := a.(spi.FinishPublisher)
	require.True(t, ok, "the coordinator carries WaitJob's notices (spi.FinishPublisher)")
	ids := make([]uuid.UUID, spi.MaxNoticeIDs+1)
	for i := range ids {
		ids[i] = uuid.New()
	}
	p.NotifyWatching(context.Background(), ids, "client-a")
	first, second := rb.from(t, "client-a"), rb.from(t, "client-a")
	assert.Equal(t, spi.WakeupHint{Source: "client-a", Watching: ids[:spi.MaxNoticeIDs]}, first)
	assert.Equal(t, spi.WakeupHint{Source: "client-a", Watching: ids[spi.MaxNoticeIDs:]}, second)
	p.NotifyFinished(context.Background(), ids[:1], "node-a")
	assert.Equal(t, spi.WakeupHint{Source: "node-a", Finished: ids[:1]}, rb.from(t, "node-a"))
}

// publishBeforeClose: a wakeup published at once (PublishWakeup, what the
// ratchet command's cancel does just before it exits) reaches the other
// coordinator though its publisher closes right after; after Close it
// fails.
func publishBeforeClose(t *testing.T, h Harness) {
	cluster := Cluster(t)
	a, _ := open(t, h, h.Addr, cluster, nil)
	b, _ := open(t, h, h.Addr, cluster, nil)
	rb := listen(b)
	p, ok := a.(interface {
		PublishWakeup(context.Context, spi.WakeupHint) error
	})
	require.True(t, ok, "the coordinator publishes at once (PublishWakeup)")
	w := spi.WakeupHint{Source: "ratchet-cli", CheckClaims: true}
	require.NoError(t, p.PublishWakeup(context.Background(), w))
	require.NoError(t, a.Close())
	assert.Equal(t, w, rb.from(t, "ratchet-cli"))
	assert.Error(t, p.PublishWakeup(context.Background(), w), "closed")
}

func clustersApart(t *testing.T, h Harness) {
	one, other := Cluster(t), Cluster(t)
	a, _ := open(t, h, h.Addr, one, nil)
	c, _ := open(t, h, h.Addr, other, nil)
	d, _ := open(t, h, h.Addr, other, nil)
	ra, rc := listen(a), listen(c)
	ctx := context.Background()

	a.NotifyNewWork(ctx, spi.PriorityNormal, "node-a")
	ra.from(t, "node-a") // the server has delivered it to every subscriber of its cluster
	d.NotifyNewWork(ctx, spi.PriorityNormal, "node-d")
	// The server delivers in order: had c heard node-a, it would have
	// heard it before node-d.
	for {
		select {
		case w := <-rc.ch:
			require.NotEqual(t, "node-a", w.Source, "a wakeup crossed from cluster %s to %s", one, other)
			if w.Source == "node-d" {
				return
			}
		case <-time.After(wait):
			t.Fatalf("no wakeup from node-d within %s", wait)
		}
	}
}

func closeTwice(t *testing.T, h Harness) {
	c, _ := open(t, h, h.Addr, Cluster(t), nil)
	require.NoError(t, c.Close())
	require.NoError(t, c.Close())
	// Harmless after Close too.
	c.NotifyNewWork(context.Background(), spi.PriorityNormal, "node-a")
	c.RegisterWakeupListener(func(spi.WakeupHint) { t.Error("a listener registered after Close was called") })
}

func blockedListener(t *testing.T, h Harness) {
	cluster := Cluster(t)
	a, _ := open(t, h, h.Addr, cluster, nil)
	b, _ := open(t, h, h.Addr, cluster, nil)
	release := make(chan struct{})
	t.Cleanup(func() { close(release) }) // runs before the coordinators' Close
	var blocked atomic.Int32
	b.RegisterWakeupListener(func(spi.WakeupHint) {
		blocked.Add(1)
		<-release
	})
	rb := listen(b)
	ra := listen(a)
	ctx := context.Background()

	// In all more sources than a listener's mailbox keeps, so that the
	// blocked listener's overflows; each source a burst.
	const round = hub.MaxPendingSources / 2
	for r := range 4 {
		start := time.Now()
		for i := range round {
			for range 10 {
				a.NotifyNewWork(ctx, spi.PriorityNormal, "a-"+strconv.Itoa(r*round+i))
			}
		}
		assert.Less(t, time.Since(start), time.Second, "NotifyNewWork waited")
		for i := range round {
			rb.from(t, "a-"+strconv.Itoa(r*round+i)) // the others are not stalled (each source arrives, in order)
		}
	}
	// Nor is the node's own publisher, nor its subscription.
	b.NotifyNewWork(ctx, spi.PriorityNormal, "node-b")
	ra.from(t, "node-b")
	rb.from(t, "node-b")
	assert.Equal(t, int32(1), blocked.Load(), "the blocked listener was called again while blocked")
}

// logs records the coordinator's log lines.
type logs struct {
	mu      sync.Mutex
	records []slog.Record
	notify  chan struct{}
}

func (l *logs) Enabled(context.Context, slog.Level) bool { return true }

func (l *logs) Handle(_ context.Context, r slog.Record) error {
	l.mu.Lock()
	l.records = append(l.records, r)
	l.mu.Unlock()
	select {
	case l.notify <- struct{}{}:
	default:
	}
	return nil
}

func (l *logs) WithAttrs([]slog.Attr) slog.Handler { return l }
func (l *logs) WithGroup(string) slog.Handler      { return l }

func (l *logs) count(prefix string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, r := range l.records {
		if strings.HasPrefix(r.Message, prefix) {
			n++
		}
	}
	return n
}

// waitFor waits until a line starting with one of prefixes was logged.
func (l *logs) waitFor(t *testing.T, prefixes ...string) {
	t.Helper()
	deadline := time.After(wait)
	for {
		for _, p := range prefixes {
			if l.count(p) > 0 {
				return
			}
		}
		select {
		case <-l.notify:
		case <-deadline:
			t.Fatalf("nothing logged starting with %q within %s", prefixes, wait)
		}
	}
}

const (
	failedLine    = "ratchet: cannot publish"
	recoveredLine = "ratchet: cluster wakeups published again"
	// lostLine starts the line of a transport that noticed the loss of
	// its connection.
	lostLine = "ratchet: lost the"
)

func outage(t *testing.T, h Harness) {
	cluster := Cluster(t)
	proxy := NewProxy(t, h.Addr)
	lines := &logs{notify: make(chan struct{}, 1)}
	c, ch := open(t, h, proxy.Addr(), cluster, slog.New(lines))
	direct, _ := open(t, h, h.Addr, cluster, nil)
	rc, rd := listen(c), listen(direct)
	ctx := context.Background()
	direct.NotifyNewWork(ctx, spi.PriorityNormal, "before")
	rc.from(t, "before")

	subscribed, _ := ch.Subscriptions()
	proxy.Down()
	// Submissions go on at full speed while the server is away: nothing
	// waits for it, and one line says it, however many jobs.
	start := time.Now()
	for range 1000 {
		c.NotifyNewWork(ctx, spi.PriorityNormal, "during")
	}
	assert.Less(t, time.Since(start), 100*time.Millisecond, "NotifyNewWork waited for an unreachable server")
	// A transport that notices the loss before it publishes (Redis)
	// fails this burst; one that notices it afterwards (NATS: a publish
	// only buffers) says it lost the connection, and fails the next burst.
	lines.waitFor(t, failedLine, lostLine)
	for range 1000 {
		c.NotifyNewWork(ctx, spi.PriorityNormal, "during")
	}
	lines.waitFor(t, failedLine)

	proxy.Up()
	reconnected, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	require.NoError(t, ch.WaitSubscriptions(reconnected, subscribed+1), "no new subscription after the server came back")
	direct.NotifyNewWork(ctx, spi.PriorityNormal, "after")
	rc.from(t, "after") // the subscription is back
	c.NotifyNewWork(ctx, spi.PriorityNormal, "back")
	rd.from(t, "back") // and publishing
	lines.waitFor(t, recoveredLine)
	assert.Equal(t, 1, lines.count(failedLine), "one line per outage, not per wakeup")
}

// unreachableAtStart: New fails, within its context, when nothing
// answers at the address (a node then runs without a coordinator).
func unreachableAtStart(t *testing.T, h Harness) {
	proxy := NewProxy(t, h.Addr)
	proxy.Down()
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	start := time.Now()
	c, _, err := h.New(ctx, proxy.Addr(), Cluster(t), slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err == nil {
		_ = c.Close()
	}
	require.Error(t, err)
	assert.Less(t, time.Since(start), 3*time.Second, "New outlived its context")
}

// idleSignal is a poll strategy that always waits the longest interval and
// tells when a claim found nothing: from then on only a wakeup gets a job
// started before that interval ends.
type idleSignal struct {
	max  time.Duration
	idle chan struct{}
}

func (s *idleSignal) Next(r spi.PollResult) time.Duration {
	if r.Claimed == 0 && r.Err == nil {
		select {
		case s.idle <- struct{}{}:
		default:
		}
	}
	return s.max
}

// wakeups counts the cluster wakeups an engine received.
type wakeups struct {
	spi.NoOpMetrics
	mu      sync.Mutex
	sources []string
}

func (w *wakeups) LocalWakeup(context.Context, string)                          {}
func (w *wakeups) ClusterWakeupPublished(context.Context, string, spi.Priority) {}
func (w *wakeups) ClusterWakeupReceived(_ context.Context, _, source string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.sources = append(w.sources, source)
}

func (w *wakeups) from() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.sources...)
}

type hello struct {
	Name string `json:"name"`
}

// twoEngines runs a client-only node (an engine with no tasks, as a web
// process that only submits) and a worker node, each with its own store
// handle on one SQLite file and its own coordinator, the worker polling
// every 5 s: the job must start long before a poll would find it.
func twoEngines(t *testing.T, h Harness) {
	const pollInterval = 5 * time.Second
	ctx := context.Background()
	cluster := Cluster(t)
	path := filepath.Join(t.TempDir(), "jobs.db")
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))

	started := make(chan time.Time, 1)
	task := ratchet.NewVoidTask("hello", func(context.Context, hello) error {
		started <- time.Now()
		return nil
	})

	workerStore, err := sqlite.Open(ctx, path, sqlite.Options{Create: true})
	require.NoError(t, err)
	t.Cleanup(func() { _ = workerStore.Close() })
	workerCoord, _ := open(t, h, h.Addr, cluster, nil)
	strategy := &idleSignal{max: pollInterval, idle: make(chan struct{}, 1)}
	received := &wakeups{}
	worker, err := engine.New(workerStore, engine.Options{
		Client:          ratchet.ClientOptions{Logger: quiet, Metrics: received},
		NodeID:          "worker",
		Coordinator:     workerCoord,
		MinPollInterval: pollInterval,
		PollInterval:    pollInterval,
		PollStrategy:    func(spi.PollConfig) spi.PollDelayStrategy { return strategy },
	}, task)
	require.NoError(t, err)
	events, unsubscribe := worker.Subscribe(16)
	t.Cleanup(unsubscribe)
	require.NoError(t, worker.Start(ctx))
	t.Cleanup(func() { _ = worker.Stop(context.Background()) })

	clientStore, err := sqlite.Open(ctx, path, sqlite.Options{Create: true})
	require.NoError(t, err)
	t.Cleanup(func() { _ = clientStore.Close() })
	clientCoord, _ := open(t, h, h.Addr, cluster, nil)
	client, err := engine.New(clientStore, engine.Options{Client: ratchet.ClientOptions{Logger: quiet}, NodeID: "client", Coordinator: clientCoord})
	require.NoError(t, err)
	require.NoError(t, client.Start(ctx))
	t.Cleanup(func() { _ = client.Stop(context.Background()) })

	select {
	case <-strategy.idle: // the worker's first claim found nothing: its next poll is 5 s away
	case <-time.After(wait):
		t.Fatalf("the worker did not poll within %s", wait)
	}
	submitted := time.Now()
	id, err := task.Submit(ctx, client.Client(), hello{Name: "cluster"})
	require.NoError(t, err)
	select {
	case at := <-started:
		assert.Less(t, at.Sub(submitted), pollInterval/2, "started by a poll, not by the wakeup")
		t.Logf("enqueue to start across two engines: %s", at.Sub(submitted).Round(time.Microsecond))
	case <-time.After(pollInterval - time.Second):
		t.Fatalf("the job did not start within %s of its submission: no wakeup reached the worker", pollInterval-time.Second)
	}
	for done := false; !done; {
		select {
		case ev := <-events:
			if done = ev.JobID == id; done {
				require.Equal(t, engine.EventSucceeded, ev.Kind)
			}
		case <-time.After(wait):
			t.Fatalf("job %s not finished within %s", id, wait)
		}
	}
	assert.Contains(t, received.from(), "client", "the worker heard no wakeup from the client node")
}

// hearing is a coordinator that also hands each wakeup its listener got
// to heard, after the listener handled it.
type hearing struct {
	spi.ClusterCoordinator
	heard chan spi.WakeupHint
}

func (c hearing) RegisterWakeupListener(fn func(spi.WakeupHint)) {
	c.ClusterCoordinator.RegisterWakeupListener(func(w spi.WakeupHint) {
		fn(w)
		select {
		case c.heard <- w:
		default:
		}
	})
}

func (c hearing) NotifyWatching(ctx context.Context, ids []uuid.UUID, source string) {
	c.ClusterCoordinator.(spi.FinishPublisher).NotifyWatching(ctx, ids, source)
}

func (c hearing) NotifyFinished(ctx context.Context, ids []uuid.UUID, source string) {
	c.ClusterCoordinator.(spi.FinishPublisher).NotifyFinished(ctx, ids, source)
}

// waitJobAcrossEngines: WaitJob on one engine's client returns when
// another engine finishes the job, woken by the coordinator's notices
// (spi.FinishPublisher). The waiter runs on a fake clock that never
// moves, so its polling never reads the job again: only the notice can
// wake it.
func waitJobAcrossEngines(t *testing.T, h Harness) {
	ctx := context.Background()
	cluster := Cluster(t)
	path := filepath.Join(t.TempDir(), "jobs.db")
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	release := make(chan struct{})
	double := ratchet.NewTask("double", func(_ context.Context, n int) (int, error) {
		<-release
		return 2 * n, nil
	})
	start := func(node string, c spi.ClusterCoordinator, clock ratchet.Clock, tasks ...ratchet.Definition) *engine.Engine {
		s, err := sqlite.Open(ctx, path, sqlite.Options{Create: true})
		require.NoError(t, err)
		t.Cleanup(func() { _ = s.Close() })
		eng, err := engine.New(s, engine.Options{Client: ratchet.ClientOptions{Logger: quiet, Clock: clock}, NodeID: node, Coordinator: c}, tasks...)
		require.NoError(t, err)
		require.NoError(t, eng.Start(ctx))
		t.Cleanup(func() { _ = eng.Stop(context.Background()) })
		return eng
	}
	workerCoord, _ := open(t, h, h.Addr, cluster, nil)
	heard := make(chan spi.WakeupHint, 100)
	start("worker", hearing{workerCoord, heard}, nil, double)
	waiterCoord, _ := open(t, h, h.Addr, cluster, nil)
	waiter := start("waiter", waiterCoord, clockwork.NewFakeClock())

	id, err := double.Submit(ctx, waiter.Client(), 21)
	require.NoError(t, err)
	done := make(chan error, 1)
	var got int
	go func() {
		var err error
		got, err = double.Wait(ctx, waiter.Client(), id)
		done <- err
	}()
	deadline := time.After(wait)
	for watched := false; !watched; {
		select {
		case w := <-heard:
			watched = slices.Contains(w.Watching, id) // the worker's node now knows of the watch
		case <-deadline:
			t.Fatalf("the worker heard no watch of job %s within %s", id, wait)
		}
	}
	close(release)
	select {
	case err := <-done:
		require.NoError(t, err)
		assert.Equal(t, 42, got)
	case <-time.After(wait):
		t.Fatalf("WaitJob was not woken within %s by the other engine's end of the job", wait)
	}
}
