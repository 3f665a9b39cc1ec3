package postgres

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

// Reconnection backoff of the wakeup listener.
const (
	listenBackoffMin = 100 * time.Millisecond
	listenBackoffMax = 5 * time.Second
)

// Liveness checks of an idle listener connection: after this long without
// a notification the listener pings the server, and reconnects when the
// ping gets no answer in time (a connection can die without a reset, and
// the kernel's keepalive takes many minutes to notice).
const (
	defaultListenPingInterval = 30 * time.Second
	defaultListenPingTimeout  = 10 * time.Second
)

// ListenWakeups calls fn for every wakeup published on [Store.WakeupChannel]
// by any store on the same database and schema, in any process: one per
// committed insert (and release, DLQ retry or recovery that made jobs due),
// with the highest priority it wrote and, as its Source, the
// [spi.InsertOptions.Source] of the insert (none for the others); and one
// with CheckClaims after each committed cancel of RUNNING jobs. It
// implements [spi.WakeupListener].
//
// It holds a dedicated connection (outside the pool) running LISTEN, and
// pings the server after 30 s without a notification. When that connection
// drops or a ping goes unanswered for 10 s, it reconnects with exponential
// backoff from 100 ms up to 5 s until it succeeds or ctx ends; wakeups published meanwhile are
// lost, which the engine's polling covers. It returns ctx's error when ctx
// ends, or an error wrapping [spi.ErrClosed] when the store is closed. fn
// runs on the listener's goroutine and must not block.
func (s *Store) ListenWakeups(ctx context.Context, fn func(spi.WakeupHint)) error {
	done, err := s.enter()
	if err != nil {
		return err
	}
	s.watchers.Add(1) // while entered: Close waits for it after stopping
	done()
	defer s.watchers.Done()

	lctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop := context.AfterFunc(s.stopCtx, cancel)
	defer stop()

	backoff := listenBackoffMin
	for {
		listening, err := s.listen(lctx, fn)
		if lctx.Err() != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return fail("listen for wakeups", spi.ErrClosed)
		}
		_ = err // the connection dropped or could not be made: retry
		if listening {
			backoff = listenBackoffMin
		}
		t := time.NewTimer(backoff)
		select {
		case <-lctx.Done():
			t.Stop()
		case <-t.C:
		}
		backoff = min(2*backoff, listenBackoffMax)
	}
}

// listen connects, runs LISTEN and delivers notifications until the
// connection fails or ctx ends. listening reports whether LISTEN succeeded.
func (s *Store) listen(ctx context.Context, fn func(spi.WakeupHint)) (listening bool, err error) {
	conn, err := pgx.ConnectConfig(ctx, s.listenCfg.Copy())
	if err != nil {
		return false, err
	}
	defer func() {
		closeCtx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_ = conn.Close(closeCtx)
	}()
	if _, err := conn.Exec(ctx, "LISTEN "+pgx.Identifier{s.channel}.Sanitize()); err != nil {
		return false, err
	}
	for {
		wctx, cancel := context.WithTimeout(ctx, s.pingInterval)
		n, err := conn.WaitForNotification(wctx)
		cancel()
		if err != nil {
			if ctx.Err() != nil || !errors.Is(err, context.DeadlineExceeded) {
				return true, err
			}
			// Idle: check that the connection still works. A timed-out
			// wait leaves it usable.
			pctx, cancel := context.WithTimeout(ctx, s.pingTimeout)
			err := conn.Ping(pctx)
			cancel()
			if err != nil {
				return true, err
			}
			continue
		}
		if n == nil || n.Channel != s.channel {
			continue
		}
		fn(parseHint(n.Payload))
	}
}

// maxSource bounds the source carried in a wakeup: a notification payload
// is limited to 8,000 bytes, and a payload too long would fail the insert
// that publishes it.
const maxSource = 1000

// sourceSuffix is the source part of the payload of a wakeup published by
// an insert from src (its spi.InsertOptions.Source): "|" and src, or ""
// when there is none. A source that cannot travel in a notification (too
// long, not UTF-8, holding a NUL byte) is left out; the wakeup then names
// no source, and its publisher merely polls once more.
func sourceSuffix(src string) string {
	if src == "" || len(src) > maxSource || !utf8.ValidString(src) || strings.ContainsRune(src, 0) {
		return ""
	}
	return "|" + src
}

// claimsPayload is the payload of the notice that claims of RUNNING jobs
// were taken away (spi.WakeupHint.CheckClaims). A listener of an earlier
// version reads it as a wakeup of NORMAL priority: one poll more.
const claimsPayload = "claims"

var _ spi.FinishPublisher = (*Store)(nil)

// NotifyWatching publishes on the store's wakeup channel that a process
// waits for the end of the jobs of ids (Client.WaitJob), in notifications
// of at most spi.MaxNoticeIDs ids; errors are dropped (the waiter polls).
// Every listener of the channel hears it (ListenWakeups, Coordinator), so
// an engine on this store needs no coordinator for it. It implements
// [spi.FinishPublisher].
func (s *Store) NotifyWatching(ctx context.Context, ids []uuid.UUID, source string) {
	s.notice(ctx, watchingPrefix, ids, source)
}

// NotifyFinished publishes that a node finished the watched jobs of ids,
// as NotifyWatching does. It implements [spi.FinishPublisher].
func (s *Store) NotifyFinished(ctx context.Context, ids []uuid.UUID, source string) {
	s.notice(ctx, finishedPrefix, ids, source)
}

// notice publishes the notices of kind (watchingPrefix, finishedPrefix)
// for ids: "w:ID,ID;SOURCE".
func (s *Store) notice(ctx context.Context, kind string, ids []uuid.UUID, source string) {
	src := strings.TrimPrefix(sourceSuffix(source), "|")
	for _, chunk := range spi.NoticeChunks(ids) {
		_, _ = s.pool.Exec(ctx, s.sql.notify, s.channel, kind+spi.EncodeJobIDs(chunk)+";"+src)
	}
}

// The prefixes of Client.WaitJob's notices (spi.FinishPublisher):
// "w:ID,ID;SOURCE" announces watched jobs, "f:ID,ID;SOURCE" finished ones.
// A listener of an earlier version reads them as wakeups of NORMAL
// priority: one poll more.
const (
	watchingPrefix = "w:"
	finishedPrefix = "f:"
)

// parseHint reads a wakeup's payload, "PRIORITY" or "PRIORITY|SOURCE", or
// claimsPayload, or a notice of WaitJob's; a priority that does not parse
// (from another publisher), and a notice that does not, count as NORMAL.
func parseHint(payload string) spi.WakeupHint {
	if payload == claimsPayload {
		return spi.WakeupHint{CheckClaims: true}
	}
	if kind := payload[:min(2, len(payload))]; kind == watchingPrefix || kind == finishedPrefix {
		list, source, _ := strings.Cut(payload[2:], ";")
		ids, err := spi.DecodeJobIDs(list)
		switch {
		case err != nil || len(ids) == 0:
			return spi.WakeupHint{Priority: spi.PriorityNormal}
		case kind == watchingPrefix:
			return spi.WakeupHint{Source: source, Watching: ids}
		}
		return spi.WakeupHint{Source: source, Finished: ids}
	}
	prio, source, _ := strings.Cut(payload, "|")
	h := spi.WakeupHint{Priority: spi.PriorityNormal, Source: source}
	if v, err := strconv.Atoi(prio); err == nil && spi.Priority(v).Valid() {
		h.Priority = spi.Priority(v)
	}
	return h
}
