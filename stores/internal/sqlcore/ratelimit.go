package sqlcore

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

// Rate limits (spi.RateResource) are resources whose claim counts starts
// instead of RUNNING holders. Their log is {rate} (scheduler_rate_start):
// per resource, a row per claim that started its jobs, with the
// database's time of that claim and how many it started. A claim that
// considers such jobs locks their resources with the dialect's Holders,
// as for permits, and then, under those locks (countRates): reads the
// database's time, deletes the rows older than each limit's period, and
// sums the rest, which Admit (or the dialect's Pick) compares with the
// limit as it admits candidates. recordRates adds the claim's row. The
// lock makes the count, the admission and the record one step: two
// claimers of a resource take turns, and the second counts the first's
// starts.

// dbNow reads the database's clock (Syntax.Now), or the process's where
// the database has none (SQLite, whose writers share the host's clock).
func (d Dialect[T]) dbNow(ctx context.Context, q Querier) (time.Time, error) {
	if d.Syntax.Now == "" {
		return time.Now().UTC().Truncate(time.Microsecond), nil
	}
	var v any
	if err := q.QueryRowContext(ctx, d.Syntax.Now).Scan(&v); err != nil {
		return time.Time{}, fmt.Errorf("read the database's clock: %w", err)
	}
	t, err := d.timeOf(v)
	if err != nil {
		return time.Time{}, fmt.Errorf("read the database's clock: %w", err)
	}
	return t.UTC().Truncate(time.Microsecond), nil
}

// rateCount is the database's time of a claim's count of its rate limits
// (zero when none), and the oldest start left in each one's window.
type rateCount struct {
	now    time.Time
	oldest map[string]time.Time
}

// countRates sets held, for each rate resource among resources (locked
// by Holders), to the larger of its RUNNING holders and its starts in the
// period before the database's time.
func (d Dialect[T]) countRates(ctx context.Context, tx *sql.Tx, resources []string, held map[string]int64) (rateCount, error) {
	var now time.Time
	oldest := map[string]time.Time{}
	s := &d.Syntax
	for _, r := range resources {
		_, period, ok := spi.RateOf(r)
		if !ok {
			continue
		}
		if now.IsZero() {
			var err error
			if now, err = d.dbNow(ctx, tx); err != nil {
				return rateCount{}, err
			}
		}
		q, args := s.SQL("DELETE FROM {rate} WHERE resource_name = ? AND started_time <= ?", s.name(r), s.time(now.Add(-period)))
		if _, err := tx.ExecContext(ctx, q, args...); err != nil {
			return rateCount{}, fmt.Errorf("prune the starts of %s: %w", r, err)
		}
		q, args = s.SQL("SELECT COALESCE(SUM(starts), 0), MIN(started_time) FROM {rate} WHERE resource_name = ?", s.name(r))
		var n int64
		var first any
		if err := tx.QueryRowContext(ctx, q, args...).Scan(&n, &first); err != nil {
			return rateCount{}, fmt.Errorf("count the starts of %s: %w", r, err)
		}
		held[r] = max(held[r], n)
		if t, err := d.timeOf(first); err == nil && !t.IsZero() {
			oldest[r] = t
		}
	}
	return rateCount{now: now, oldest: oldest}, nil
}

// admitted returns the set of ids, the candidates a claim admitted, when
// it counted rate limits (nil otherwise: nothing needs it).
func (rc rateCount) admitted(ids []uuid.UUID) map[uuid.UUID]bool {
	if rc.now.IsZero() {
		return nil
	}
	set := make(map[uuid.UUID]bool, len(ids))
	for _, id := range ids {
		set[id] = true
	}
	return set
}

// heldBack reports to p.Held the rate-limited candidates the claim passed
// over because their window was full (held, after the admission), and
// when the first of those windows has room again.
func (rc rateCount) heldBack(p spi.ClaimParams, cands []Candidate, admitted map[uuid.UUID]bool, held map[string]int64) {
	if rc.now.IsZero() || p.Held == nil {
		return
	}
	passed := map[string]int{}
	for _, c := range cands {
		if !admitted[c.ID] && spi.IsRateResource(c.Resource) && held[c.Resource] >= c.Limit {
			passed[c.Resource]++
		}
	}
	for r, n := range passed {
		_, period, _ := spi.RateOf(r)
		first, ok := rc.oldest[r]
		if !ok {
			first = rc.now // the window's starts are this claim's
		}
		p.Held.Hold(n, first.Add(period).Sub(rc.now))
	}
}

// recordRates adds, at now (the count's time), the starts of the
// admitted candidates to the logs of their rate resources.
func (d Dialect[T]) recordRates(ctx context.Context, tx *sql.Tx, cands []Candidate, admitted map[uuid.UUID]bool, now time.Time) error {
	if now.IsZero() {
		return nil
	}
	starts := map[string]int64{}
	var order []string
	for _, c := range cands {
		if admitted[c.ID] && spi.IsRateResource(c.Resource) {
			if starts[c.Resource] == 0 {
				order = append(order, c.Resource)
			}
			starts[c.Resource]++
		}
	}
	s := &d.Syntax
	record := s.RateRecord
	if record == "" {
		record = "INSERT INTO {rate} (resource_name, started_time, starts) VALUES (?, ?, ?)"
		if s.OnConflict {
			record += " ON CONFLICT (resource_name, started_time) DO UPDATE SET starts = {rate}.starts + excluded.starts"
		}
	}
	for _, r := range order {
		q, args := s.SQL(record, s.name(r), s.time(now), starts[r])
		if _, err := tx.ExecContext(ctx, q, args...); err != nil {
			return fmt.Errorf("record the starts of %s: %w", r, err)
		}
	}
	return nil
}

// RateStarts implements [spi.RateLimitStore].
func (c Core[T]) RateStarts(ctx context.Context, resources []string) ([]spi.RateWindow, error) {
	var out []spi.RateWindow
	err := c.do("read rate limits", func() error {
		out = out[:0]
		d := c.cfg.D
		s := &d.Syntax
		now, err := d.dbNow(ctx, c.cfg.DB)
		if err != nil {
			return err
		}
		for _, r := range resources {
			key, period, ok := spi.RateOf(r)
			if !ok {
				continue
			}
			q, args := s.SQL("SELECT COALESCE(SUM(starts), 0) FROM {rate} WHERE resource_name = ? AND started_time > ?", s.name(r), s.time(now.Add(-period)))
			var n int64
			if err := c.cfg.DB.QueryRowContext(ctx, q, args...).Scan(&n); err != nil {
				return fmt.Errorf("count the starts of %s: %w", r, err)
			}
			out = append(out, spi.RateWindow{Resource: r, Key: key, Period: period, Starts: n, At: now})
		}
		return nil
	})
	return out, err
}
