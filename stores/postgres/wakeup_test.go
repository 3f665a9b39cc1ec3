package postgres

import (
	"context"
	"errors"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	ratchet "github.com/ratchet-go/ratchet/sdk"
	"github.com/ratchet-go/ratchet/sdk/spi"
)

// listenerPID returns the backend pid of s's wakeup listener once its
// LISTEN has completed, or 0.
func listenerPID(t *testing.T, s *Store) int32 {
	t.Helper()
	var pid int32
	err := s.pool.QueryRow(context.Background(), `SELECT pid FROM pg_stat_activity
		WHERE query = $1 AND state = 'idle' ORDER BY backend_start DESC LIMIT 1`,
		"LISTEN "+pgx.Identifier{s.channel}.Sanitize()).Scan(&pid)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0
	}
	require.NoError(t, err)
	return pid
}

// waitListening waits until s's wakeup listener is listening.
func waitListening(t *testing.T, s *Store) int32 {
	t.Helper()
	var pid int32
	require.Eventually(t, func() bool {
		pid = listenerPID(t, s)
		return pid != 0
	}, 10*time.Second, 10*time.Millisecond, "the wakeup listener never started listening")
	return pid
}

// listen starts s.ListenWakeups and returns the channel of wakeups and of
// its result.
func listen(t *testing.T, s *Store) (<-chan spi.Priority, <-chan error, context.CancelFunc) {
	t.Helper()
	got := make(chan spi.Priority, 64)
	done := make(chan error, 1)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go func() {
		done <- s.ListenWakeups(ctx, func(h spi.WakeupHint) {
			p := h.Priority
			select {
			case got <- p:
			default:
			}
		})
	}()
	waitListening(t, s)
	return got, done, cancel
}

// next returns the next wakeup, failing the test after a while.
func next(t *testing.T, got <-chan spi.Priority) spi.Priority {
	t.Helper()
	select {
	case p := <-got:
		return p
	case <-time.After(10 * time.Second):
		t.Fatal("no wakeup arrived")
		return 0
	}
}

func TestWakeupFromAnotherStore(t *testing.T) {
	dsn, schema := testDB(t)
	listener := openSchema(t, dsn, schema)
	writer := openSchema(t, dsn, schema) // another pool, as another process
	got, _, _ := listen(t, listener)

	insert(t, writer, job(spi.PriorityHigh, t0))
	assert.Equal(t, spi.PriorityHigh, next(t, got))

	// A batch wakes once, with its highest priority; so does a COPY batch.
	insert(t, writer, job(spi.PriorityLow, t0), job(spi.PriorityCritical, t0), job(spi.PriorityLowest, t0))
	assert.Equal(t, spi.PriorityCritical, next(t, got))
	var many []*spi.Job
	for i := range CopyThreshold {
		many = append(many, job(spi.Priority(i%2), t0))
	}
	insert(t, writer, many...)
	assert.Equal(t, spi.PriorityLow, next(t, got))

	// A batch of duplicates writes nothing and wakes nobody.
	k := job(spi.PriorityNormal, t0)
	k.IdempotencyKey = "once"
	insert(t, writer, k)
	assert.Equal(t, spi.PriorityNormal, next(t, got))
	dup := job(spi.PriorityCritical, t0)
	dup.IdempotencyKey = "once"
	res, err := writer.InsertJobs(context.Background(), []*spi.Job{dup}, spi.InsertOptions{})
	require.NoError(t, err)
	require.True(t, res[0].Duplicate)
	insert(t, writer, job(spi.PriorityLowest, t0))
	assert.Equal(t, spi.PriorityLowest, next(t, got), "the duplicate published no wakeup")

	// Releases and DLQ retries make work due, and wake too.
	c := claim(t, writer, "n", 1, t0, 0)
	require.Len(t, c, 1)
	_, err = writer.ReleaseJobs(context.Background(), []spi.ClaimRef{ref(c[0])}, t0)
	require.NoError(t, err)
	assert.Equal(t, c[0].Priority, next(t, got))
	c = claim(t, writer, "n", 1, t0, 0)
	require.Len(t, c, 1)
	ok, err := writer.CompleteJobs(context.Background(), []spi.Completion{{ClaimRef: ref(c[0]), Outcome: spi.OutcomeFailed, FinishedAt: t0, Attempts: 1}})
	require.NoError(t, err)
	require.Equal(t, []bool{true}, ok)
	require.NoError(t, writer.RetryFailedJob(context.Background(), c[0].ID, t0))
	assert.Equal(t, c[0].Priority, next(t, got), "a job out of the DLQ wakes the pollers")
}

func TestWakeupsStayInTheirSchema(t *testing.T) {
	dsn, a := testDB(t)
	_, b := testDB(t)
	sa := openSchema(t, dsn, a)
	sb := openSchema(t, dsn, b)
	gotB, _, _ := listen(t, sb)
	insert(t, sa, job(spi.PriorityCritical, t0))
	insert(t, sb, job(spi.PriorityLowest, t0))
	assert.Equal(t, spi.PriorityLowest, next(t, gotB), "a wakeup of another schema arrived")
}

func TestWakeupListenerReconnects(t *testing.T) {
	dsn, schema := testDB(t)
	listener := openSchema(t, dsn, schema)
	writer := openSchema(t, dsn, schema)
	got, done, _ := listen(t, listener)
	insert(t, writer, job(spi.PriorityHigh, t0))
	require.Equal(t, spi.PriorityHigh, next(t, got))

	for round := range 2 {
		pid := waitListening(t, listener)
		var ok bool
		require.NoError(t, writer.pool.QueryRow(context.Background(), `SELECT pg_terminate_backend($1)`, pid).Scan(&ok))
		require.True(t, ok)
		// The listener comes back on a new connection.
		require.Eventually(t, func() bool {
			p := listenerPID(t, listener)
			return p != 0 && p != pid
		}, 15*time.Second, 20*time.Millisecond, "round %d: the listener did not reconnect", round)
		select {
		case err := <-done:
			t.Fatalf("ListenWakeups returned after a dropped connection: %v", err)
		default:
		}
		insert(t, writer, job(spi.PriorityLow, t0))
		require.Equal(t, spi.PriorityLow, next(t, got), "round %d", round)
	}
}

func TestListenWakeupsEnds(t *testing.T) {
	dsn, schema := testDB(t)
	s := openSchema(t, dsn, schema)

	_, done, cancel := listen(t, s)
	cancel()
	select {
	case err := <-done:
		require.ErrorIs(t, err, context.Canceled)
	case <-time.After(10 * time.Second):
		t.Fatal("ListenWakeups did not return when its context ended")
	}

	_, done, _ = listen(t, s)
	closed := make(chan error, 1)
	go func() { closed <- s.Close() }()
	select {
	case err := <-done:
		require.ErrorIs(t, err, spi.ErrClosed)
	case <-time.After(10 * time.Second):
		t.Fatal("ListenWakeups did not return when the store closed")
	}
	select {
	case err := <-closed:
		require.NoError(t, err)
	case <-time.After(10 * time.Second):
		t.Fatal("Close hung with a listener running")
	}
}

func TestListenWakeupsWithoutServerKeepsTrying(t *testing.T) {
	// The listener of a store whose server went away retries until ctx
	// ends, without returning early.
	dsn, schema := testDB(t)
	s := openSchema(t, dsn, schema)
	cfg := s.listenCfg.Copy()
	cfg.Host, cfg.Port = "127.0.0.1", 1
	cfg.Fallbacks = nil
	s.listenCfg = cfg
	ctx, cancel := context.WithTimeout(context.Background(), 700*time.Millisecond)
	defer cancel()
	start := time.Now()
	err := s.ListenWakeups(ctx, func(spi.WakeupHint) {})
	require.ErrorIs(t, err, context.DeadlineExceeded)
	assert.GreaterOrEqual(t, time.Since(start), 600*time.Millisecond)
}

func TestParseHint(t *testing.T) {
	for payload, want := range map[string]spi.WakeupHint{
		"0": {Priority: 0}, "4": {Priority: 4}, "3|node-a": {Priority: 3, Source: "node-a"},
		"": {Priority: spi.PriorityNormal}, "9": {Priority: spi.PriorityNormal}, "x|n": {Priority: spi.PriorityNormal, Source: "n"},
		"-1": {Priority: spi.PriorityNormal},
		"w:00000000-0000-0000-0000-000000000001;node-a": {Source: "node-a", Watching: []uuid.UUID{uuid.MustParse("00000000-0000-0000-0000-000000000001")}},
		"f:00000000-0000-0000-0000-000000000001,00000000-0000-0000-0000-000000000002;": {Finished: []uuid.UUID{
			uuid.MustParse("00000000-0000-0000-0000-000000000001"), uuid.MustParse("00000000-0000-0000-0000-000000000002")}},
		"f:not-an-id;node-a": {Priority: spi.PriorityNormal}, "w:": {Priority: spi.PriorityNormal},
	} {
		assert.Equal(t, want, parseHint(payload), "payload %q", payload)
	}
}

func TestInsertJobsTxCommitAndRollback(t *testing.T) {
	ctx := context.Background()
	dsn, schema := testDB(t)
	s := openSchema(t, dsn, schema)
	got, _, _ := listen(t, s)
	app := rawPool(t, dsn) // the application's own pool

	for _, n := range []int{1, CopyThreshold} {
		// Rollback: no jobs, no wakeup.
		tx, err := app.Begin(ctx)
		require.NoError(t, err)
		var jobs []*spi.Job
		for range n {
			jobs = append(jobs, job(spi.PriorityCritical, t0))
		}
		res, err := s.InsertJobsTx(ctx, tx, jobs, spi.InsertOptions{})
		require.NoError(t, err)
		require.Len(t, res, n)
		// Visible inside the transaction only.
		var count int
		require.NoError(t, tx.QueryRow(ctx, `SELECT count(*) FROM `+qualify(schema, "scheduler_job")+` WHERE job_id = $1`, jobs[0].ID).Scan(&count))
		assert.Equal(t, 1, count)
		_, err = s.GetJob(ctx, jobs[0].ID)
		require.ErrorIs(t, err, spi.ErrNotFound, "uncommitted jobs are invisible outside the transaction")
		require.NoError(t, tx.Rollback(ctx))
		_, err = s.GetJob(ctx, jobs[0].ID)
		require.ErrorIs(t, err, spi.ErrNotFound)

		// Commit: the jobs exist and the wakeup arrives; the rolled-back
		// insert's wakeup never came (it would have arrived first).
		tx, err = app.Begin(ctx)
		require.NoError(t, err)
		jobs = jobs[:0]
		for range n {
			jobs = append(jobs, job(spi.PriorityLow, t0))
		}
		_, err = s.InsertJobsTx(ctx, tx, jobs, spi.InsertOptions{})
		require.NoError(t, err)
		select {
		case p := <-got:
			t.Fatalf("wakeup %s before commit", p)
		default:
		}
		require.NoError(t, tx.Commit(ctx))
		assert.Equal(t, spi.PriorityLow, next(t, got), "n=%d", n)
		assert.Equal(t, jobs[0].ID, get(t, s, jobs[0].ID).ID)
	}
}

func TestInsertJobsTxNeedsPgxTx(t *testing.T) {
	ctx := context.Background()
	s := openStore(t)
	for _, tx := range []any{nil, "tx", s.pool, (*pgx.Conn)(nil)} {
		_, err := s.InsertJobsTx(ctx, tx, []*spi.Job{job(spi.PriorityNormal, t0)}, spi.InsertOptions{})
		require.Error(t, err)
		assert.Contains(t, err.Error(), "needs a pgx.Tx", "%T", tx)
	}
	var nilTx pgx.Tx
	_, err := s.InsertJobsTx(ctx, nilTx, nil, spi.InsertOptions{})
	require.Error(t, err)
	// Validation happens before anything is written.
	tx, err := s.pool.Begin(ctx)
	require.NoError(t, err)
	defer tx.Rollback(ctx)
	_, err = s.InsertJobsTx(ctx, tx, []*spi.Job{nil}, spi.InsertOptions{})
	require.ErrorContains(t, err, "job 0 is nil")
	res, err := s.InsertJobsTx(ctx, tx, nil, spi.InsertOptions{})
	require.NoError(t, err)
	assert.Empty(t, res)
}

type greeting struct {
	Name string `json:"name"`
}

func TestClientSubmitInTx(t *testing.T) {
	ctx := context.Background()
	s := openStore(t)
	got, _, _ := listen(t, s)
	client, err := ratchet.NewClient(s, ratchet.ClientOptions{})
	require.NoError(t, err)
	task := ratchet.NewVoidTask("greet", func(context.Context, greeting) error { return nil })

	// Rolled back with the application's own write.
	tx, err := s.Pool().Begin(ctx)
	require.NoError(t, err)
	id, err := task.Submit(ctx, client, greeting{"ada"}, ratchet.InTx(tx), ratchet.WithPriority(ratchet.PriorityHigh))
	require.NoError(t, err)
	require.NoError(t, tx.Rollback(ctx))
	_, err = client.GetJob(ctx, id)
	require.ErrorIs(t, err, ratchet.ErrNotFound)

	// Committed.
	tx, err = s.Pool().Begin(ctx)
	require.NoError(t, err)
	id, err = task.Submit(ctx, client, greeting{"grace"}, ratchet.InTx(tx), ratchet.WithPriority(ratchet.PriorityLow),
		ratchet.WithIdempotencyKey("greet-grace"), ratchet.WithTags("eu"))
	require.NoError(t, err)
	require.NoError(t, tx.Commit(ctx))
	assert.Equal(t, spi.PriorityLow, next(t, got), "the rolled-back submission published nothing")
	j, err := client.GetJob(ctx, id)
	require.NoError(t, err)
	assert.Equal(t, "greet", j.TaskName)
	assert.JSONEq(t, `{"name":"grace"}`, string(j.Payload))
	assert.Equal(t, []string{"eu"}, j.Tags)

	// The key holds across transactions.
	tx, err = s.Pool().Begin(ctx)
	require.NoError(t, err)
	again, err := task.Submit(ctx, client, greeting{"grace"}, ratchet.InTx(tx), ratchet.WithIdempotencyKey("greet-grace"))
	require.NoError(t, err)
	require.NoError(t, tx.Commit(ctx))
	assert.Equal(t, id, again)

	// A transaction of the wrong kind is refused.
	_, err = task.Submit(ctx, client, greeting{"x"}, ratchet.InTx(struct{}{}))
	require.ErrorContains(t, err, "needs a pgx.Tx")
}

// blackholeProxy forwards TCP connections to target until freeze, after
// which the connections open at that moment swallow everything in both
// directions without closing: a connection that died without a reset.
type blackholeProxy struct {
	ln     net.Listener
	target string
	mu     sync.Mutex
	conns  []*proxied
}

type proxied struct {
	frozen   atomic.Bool
	down, up net.Conn
}

func newBlackholeProxy(t *testing.T, target string) *blackholeProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	p := &blackholeProxy{ln: ln, target: target}
	go p.serve()
	t.Cleanup(func() {
		_ = ln.Close()
		p.mu.Lock()
		defer p.mu.Unlock()
		for _, c := range p.conns {
			_ = c.down.Close()
			_ = c.up.Close()
		}
	})
	return p
}

func (p *blackholeProxy) serve() {
	for {
		down, err := p.ln.Accept()
		if err != nil {
			return
		}
		up, err := net.Dial("tcp", p.target)
		if err != nil {
			_ = down.Close()
			continue
		}
		c := &proxied{down: down, up: up}
		p.mu.Lock()
		p.conns = append(p.conns, c)
		p.mu.Unlock()
		go c.pipe(down, up)
		go c.pipe(up, down)
	}
}

func (c *proxied) pipe(from, to net.Conn) {
	buf := make([]byte, 32<<10)
	for {
		n, err := from.Read(buf)
		if err != nil {
			if !c.frozen.Load() {
				_ = to.Close()
			}
			return
		}
		if !c.frozen.Load() {
			if _, err := to.Write(buf[:n]); err != nil {
				return
			}
		}
	}
}

// freeze blackholes the connections open now.
func (p *blackholeProxy) freeze() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.conns {
		c.frozen.Store(true)
	}
}

func TestWakeupListenerDetectsADeadConnection(t *testing.T) {
	dsn, schema := testDB(t)
	cfg, err := pgx.ParseConfig(dsn)
	require.NoError(t, err)
	if strings.HasPrefix(cfg.Host, "/") {
		t.Skip("the test server is on a Unix socket")
	}
	proxy := newBlackholeProxy(t, net.JoinHostPort(cfg.Host, strconv.Itoa(int(cfg.Port))))
	listener := openSchema(t, dsn, schema)
	writer := openSchema(t, dsn, schema)
	lcfg := listener.listenCfg.Copy()
	addr := proxy.ln.Addr().(*net.TCPAddr)
	lcfg.Host, lcfg.Port, lcfg.Fallbacks = "127.0.0.1", uint16(addr.Port), nil
	listener.listenCfg = lcfg
	listener.pingInterval, listener.pingTimeout = 100*time.Millisecond, 300*time.Millisecond

	got, done, _ := listen(t, listener)
	insert(t, writer, job(spi.PriorityHigh, t0))
	require.Equal(t, spi.PriorityHigh, next(t, got))
	pid := waitListening(t, listener)

	proxy.freeze()
	// The old backend lives on behind the frozen proxy; the listener gives
	// up on it and listens on a new connection.
	require.Eventually(t, func() bool {
		p := listenerPID(t, listener)
		return p != 0 && p != pid
	}, 15*time.Second, 20*time.Millisecond, "the listener did not notice its dead connection")
	select {
	case err := <-done:
		t.Fatalf("ListenWakeups returned: %v", err)
	default:
	}
	insert(t, writer, job(spi.PriorityLow, t0))
	assert.Equal(t, spi.PriorityLow, next(t, got))
}
