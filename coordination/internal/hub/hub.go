package hub

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

// DefaultPublishTimeout bounds one publish when Options.PublishTimeout is
// zero.
const DefaultPublishTimeout = time.Second

// MaxPendingSources bounds the wakeups that wait for one listener (or for
// the publisher): wakeups of the same source coalesce into one, with the
// highest priority, so a slow listener holds at most one per node; beyond
// this many nodes the newest are dropped.
const MaxPendingSources = 64

// Options configure a Hub.
type Options struct {
	// Name names the transport in log lines ("redis", "nats").
	Name string
	// Logger receives the publish failures and recoveries; nil means
	// slog.Default().
	Logger *slog.Logger
	// PublishTimeout bounds one publish; zero means DefaultPublishTimeout.
	PublishTimeout time.Duration
}

// Hub publishes wakeups through a transport and fans the received ones out
// to the registered listeners. Create it with New; its methods are safe for
// concurrent use.
type Hub struct {
	publish func(ctx context.Context, msg []byte) error
	opts    Options
	log     *slog.Logger

	ctx    context.Context // ends at Close
	cancel context.CancelFunc
	wg     sync.WaitGroup

	out *mailbox // wakeups to publish

	mu        sync.Mutex
	listeners []*mailbox
	closed    bool

	// The publisher's failure state (its goroutine only).
	failing     bool
	failedSince time.Time
	failed      int

	subMu      sync.Mutex
	subscribed int           // confirmed (re)subscriptions
	subChanged chan struct{} // closed and replaced at each
}

// New returns a hub that publishes with publish (called with a context
// bounded by the publish timeout, from the publisher's goroutine and from
// PublishNow's callers: it must be safe for concurrent use) and starts its
// publisher.
func New(publish func(ctx context.Context, msg []byte) error, opts Options) *Hub {
	if opts.PublishTimeout <= 0 {
		opts.PublishTimeout = DefaultPublishTimeout
	}
	if opts.Name == "" {
		opts.Name = "coordinator"
	}
	log := opts.Logger
	if log == nil {
		log = slog.Default()
	}
	ctx, cancel := context.WithCancel(context.Background())
	h := &Hub{publish: publish, opts: opts, log: log.With("coordinator", opts.Name), ctx: ctx, cancel: cancel,
		out: newMailbox(), subChanged: make(chan struct{})}
	h.wg.Add(1)
	go h.publisher()
	return h
}

// Notify queues a wakeup for publishing and returns at once: wakeups that
// wait while a publish is under way coalesce (one per source, the highest
// priority), so a burst of submissions costs one publish per round trip,
// and a server that is down never blocks a submission.
func (h *Hub) Notify(p spi.Priority, source string) {
	if h.ctx.Err() != nil {
		return
	}
	h.out.put(spi.WakeupHint{Priority: p, Source: source})
}

// NotifyClaims queues, as Notify does, the notice that a cancel took
// claims of RUNNING jobs away (spi.WakeupHint.CheckClaims): notices that
// wait coalesce into one.
func (h *Hub) NotifyClaims(source string) {
	if h.ctx.Err() != nil {
		return
	}
	h.out.put(spi.WakeupHint{Source: source, CheckClaims: true})
}

// NotifyWatching queues, as Notify does, the notice that a process waits
// for the end of the jobs of ids (spi.FinishPublisher), in notices of at
// most spi.MaxNoticeIDs ids. Notices are not coalesced; past
// MaxPendingNotices waiting for the publisher the newest are dropped (the
// waiter polls).
func (h *Hub) NotifyWatching(ids []uuid.UUID, source string) {
	for _, chunk := range spi.NoticeChunks(ids) {
		h.notice(spi.WakeupHint{Source: source, Watching: chunk})
	}
}

// NotifyFinished queues the notice that a node finished the watched jobs
// of ids, as NotifyWatching does.
func (h *Hub) NotifyFinished(ids []uuid.UUID, source string) {
	for _, chunk := range spi.NoticeChunks(ids) {
		h.notice(spi.WakeupHint{Source: source, Finished: chunk})
	}
}

func (h *Hub) notice(w spi.WakeupHint) {
	if h.ctx.Err() != nil {
		return
	}
	h.out.put(w)
}

// PublishNow publishes w at once and returns the transport's answer,
// within the publish timeout: for a process that must know its wakeup
// left before it exits (a command line's cancel), where Notify would
// queue it and Close drop it. It neither waits for nor coalesces with the
// queued wakeups, and it fails after Close.
func (h *Hub) PublishNow(ctx context.Context, w spi.WakeupHint) error {
	if h.ctx.Err() != nil {
		return fmt.Errorf("ratchet %s coordinator: closed", h.opts.Name)
	}
	ctx, cancel := context.WithTimeout(ctx, h.opts.PublishTimeout)
	defer cancel()
	if err := h.publish(ctx, Encode(w)); err != nil {
		return fmt.Errorf("ratchet %s coordinator: publish: %w", h.opts.Name, err)
	}
	return nil
}

// Register adds a listener. Each listener has a goroutine of its own that
// calls it with the wakeups received; while it is busy, its wakeups
// coalesce (see MaxPendingSources), so a slow or blocked listener delays
// only itself and never the others, the subscription or the publisher.
// A listener registered after Close is never called.
func (h *Hub) Register(fn func(spi.WakeupHint)) {
	if fn == nil {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return
	}
	m := newMailbox()
	h.listeners = append(h.listeners, m)
	go func() {
		for {
			hints, ok := m.take(h.ctx)
			if !ok {
				return
			}
			for _, w := range hints {
				if h.ctx.Err() != nil {
					return
				}
				fn(w)
			}
		}
	}()
}

// Deliver hands a received message to every listener without waiting for
// any; a malformed message is ignored.
func (h *Hub) Deliver(msg []byte) {
	w, err := Decode(msg)
	if err != nil {
		h.log.Debug("ratchet: ignored a malformed wakeup", "error", err)
		return
	}
	h.mu.Lock()
	ls := h.listeners
	h.mu.Unlock()
	for _, m := range ls {
		m.put(w)
	}
}

// Subscribed records a confirmed subscription (the first, or one renewed
// after a reconnection). Transports call it; tests wait on it.
func (h *Hub) Subscribed() {
	h.subMu.Lock()
	defer h.subMu.Unlock()
	h.subscribed++
	close(h.subChanged)
	h.subChanged = make(chan struct{})
}

// Subscriptions returns the number of confirmed subscriptions so far, and
// a channel closed at the next one.
func (h *Hub) Subscriptions() (int, <-chan struct{}) {
	h.subMu.Lock()
	defer h.subMu.Unlock()
	return h.subscribed, h.subChanged
}

// WaitSubscriptions waits until at least n subscriptions were confirmed,
// or ctx ends.
func (h *Hub) WaitSubscriptions(ctx context.Context, n int) error {
	for {
		got, next := h.Subscriptions()
		if got >= n {
			return nil
		}
		select {
		case <-next:
		case <-ctx.Done():
			return fmt.Errorf("no subscription confirmed: %w", ctx.Err())
		}
	}
}

// Close stops the publisher (a wakeup not yet published is dropped) and
// waits for it, and stops the listeners' goroutines. A listener call
// under way is not waited for, so that a blocked listener cannot block
// Close. Calling it twice is harmless.
func (h *Hub) Close() {
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return
	}
	h.closed = true
	h.listeners = nil
	h.mu.Unlock()
	h.cancel()
	h.wg.Wait()
}

// Done is closed when Close begins.
func (h *Hub) Done() <-chan struct{} { return h.ctx.Done() }

func (h *Hub) publisher() {
	defer h.wg.Done()
	for {
		hints, ok := h.out.take(h.ctx)
		if !ok {
			if h.failing {
				h.log.Warn("ratchet: cluster wakeups not published until close", "failed", h.failed, "since", h.failedSince)
			}
			return
		}
		for _, w := range hints {
			ctx, cancel := context.WithTimeout(h.ctx, h.opts.PublishTimeout)
			err := h.publish(ctx, Encode(w))
			cancel()
			if h.ctx.Err() != nil {
				return
			}
			h.result(err)
		}
	}
}

// result logs the first failure of an outage and the recovery that ends
// it, with the number of publishes that failed meanwhile: never a line per
// job.
func (h *Hub) result(err error) {
	switch {
	case err != nil && !h.failing:
		h.failing, h.failedSince, h.failed = true, time.Now(), 1
		h.log.Warn("ratchet: cannot publish cluster wakeups; other nodes find new work by polling until this recovers", "error", err)
	case err != nil:
		h.failed++
	case h.failing:
		h.failing = false
		h.log.Info("ratchet: cluster wakeups published again", "failed", h.failed, "outage", time.Since(h.failedSince).Round(time.Millisecond))
	}
}

// MaxPendingNotices bounds the WaitJob notices (spi.FinishPublisher) that
// wait for one listener or for the publisher; the newest beyond are
// dropped.
const MaxPendingNotices = 256

// mailbox holds wakeups for one consumer, coalesced by source, a claims
// notice (claims: its source), coalesced into one, and WaitJob's notices,
// in arrival order.
type mailbox struct {
	mu      sync.Mutex
	pending map[string]spi.Priority
	order   []string
	claims  *string
	notices []spi.WakeupHint
	ready   chan struct{} // holds a token while pending is not empty
}

func newMailbox() *mailbox {
	return &mailbox{pending: map[string]spi.Priority{}, ready: make(chan struct{}, 1)}
}

// put adds w, merging it with a waiting wakeup of the same source; it
// never blocks.
func (m *mailbox) put(w spi.WakeupHint) {
	m.mu.Lock()
	if len(w.Watching) > 0 || len(w.Finished) > 0 {
		if len(m.notices) < MaxPendingNotices {
			m.notices = append(m.notices, w)
		}
		m.mu.Unlock()
		m.signal()
		return
	}
	if w.CheckClaims {
		if m.claims == nil {
			m.claims = &w.Source
		}
		m.mu.Unlock()
		m.signal()
		return
	}
	if p, ok := m.pending[w.Source]; ok {
		m.pending[w.Source] = max(p, w.Priority)
		m.mu.Unlock()
		return
	}
	if len(m.pending) >= MaxPendingSources {
		m.mu.Unlock()
		return
	}
	m.pending[w.Source] = w.Priority
	m.order = append(m.order, w.Source)
	m.mu.Unlock()
	m.signal()
}

// signal marks the mailbox ready.
func (m *mailbox) signal() {
	select {
	case m.ready <- struct{}{}:
	default:
	}
}

// take waits for wakeups and returns them all, in arrival order, or false
// when ctx ends.
func (m *mailbox) take(ctx context.Context) ([]spi.WakeupHint, bool) {
	select {
	case <-m.ready:
	case <-ctx.Done():
		return nil, false
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	hints := make([]spi.WakeupHint, 0, len(m.order)+1+len(m.notices))
	if m.claims != nil {
		hints = append(hints, spi.WakeupHint{Source: *m.claims, CheckClaims: true})
		m.claims = nil
	}
	hints = append(hints, m.notices...)
	m.notices = nil
	for _, s := range m.order {
		hints = append(hints, spi.WakeupHint{Priority: m.pending[s], Source: s})
	}
	clear(m.pending)
	m.order = m.order[:0]
	return hints, true
}

// ErrMalformed reports a message that is not a wakeup.
var ErrMalformed = errors.New("ratchet: malformed wakeup")

// Encode renders a wakeup as its priority digit, a colon and the source
// node id ("2:node-a"), a claims notice as "c:" and the source: a few
// bytes per message; and WaitJob's notices as "w:" (watching) or "f:"
// (finished), the ids (spi.EncodeJobIDs), ";" and the source. (A decoder
// of an earlier version drops a claims notice or a WaitJob notice as
// malformed.)
func Encode(w spi.WakeupHint) []byte {
	switch {
	case len(w.Watching) > 0:
		return []byte("w:" + spi.EncodeJobIDs(w.Watching) + ";" + w.Source)
	case len(w.Finished) > 0:
		return []byte("f:" + spi.EncodeJobIDs(w.Finished) + ";" + w.Source)
	}
	p := min(max(w.Priority, spi.PriorityLowest), spi.PriorityCritical)
	b := make([]byte, 0, 2+len(w.Source))
	if w.CheckClaims {
		b = append(b, 'c', ':')
	} else {
		b = append(b, byte('0'+p), ':')
	}
	return append(b, w.Source...)
}

// Decode parses a message written by Encode.
func Decode(msg []byte) (spi.WakeupHint, error) {
	if len(msg) >= 2 && (msg[0] == 'w' || msg[0] == 'f') && msg[1] == ':' {
		list, source, _ := strings.Cut(string(msg[2:]), ";")
		ids, err := spi.DecodeJobIDs(list)
		if err != nil || len(ids) == 0 {
			return spi.WakeupHint{}, fmt.Errorf("%w: %.40q", ErrMalformed, msg)
		}
		if msg[0] == 'w' {
			return spi.WakeupHint{Source: source, Watching: ids}, nil
		}
		return spi.WakeupHint{Source: source, Finished: ids}, nil
	}
	if len(msg) >= 2 && msg[0] == 'c' && msg[1] == ':' {
		return spi.WakeupHint{Source: string(msg[2:]), CheckClaims: true}, nil
	}
	if len(msg) < 2 || msg[1] != ':' || msg[0] < '0' || msg[0] > byte('0'+spi.PriorityCritical) {
		return spi.WakeupHint{}, fmt.Errorf("%w: %.40q", ErrMalformed, msg)
	}
	return spi.WakeupHint{Priority: spi.Priority(msg[0] - '0'), Source: string(msg[2:])}, nil
}
