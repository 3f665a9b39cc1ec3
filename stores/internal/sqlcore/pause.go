package sqlcore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

// PauseTask pauses task from now on: a row of scheduler_task_pause, which
// every claim's candidates statement reads (Syntax.candidates, and
// PostgreSQL's own claim). A task paused already keeps its first row and
// reports false. It implements [spi.TaskPauser].
func (c Core[T]) PauseTask(ctx context.Context, task string, now time.Time) (bool, error) {
	if task == "" {
		return false, c.cfg.Fail("pause task", errors.New("the task name is empty"))
	}
	s := &c.cfg.D.Syntax
	var paused bool
	err := c.do("pause task "+task, func() error {
		q := "INSERT INTO {pause} (task_name, paused_time) VALUES (?, ?)"
		if s.OnConflict {
			q += "\n\tON CONFLICT (task_name) DO NOTHING"
		}
		q, args := s.SQL(q, s.text(task), s.time(now))
		var err error
		paused, err = applied(c.cfg.DB.ExecContext(ctx, q, args...))
		if err != nil && c.cfg.D.IsDuplicate != nil && c.cfg.D.IsDuplicate(err) {
			paused, err = false, nil // paused already
		}
		return err
	})
	return paused, err
}

// ResumeTask deletes the pause of task and reports whether there was one;
// the nodes are woken to claim its due jobs. It implements
// [spi.TaskPauser].
func (c Core[T]) ResumeTask(ctx context.Context, task string) (bool, error) {
	s := &c.cfg.D.Syntax
	var resumed bool
	err := c.do("resume task "+task, func() error {
		q, args := s.SQL("DELETE FROM {pause} WHERE task_name = ?", s.text(task))
		var err error
		resumed, err = applied(c.cfg.DB.ExecContext(ctx, q, args...))
		return err
	})
	if resumed && c.cfg.D.Wake != nil {
		c.cfg.D.Wake(ctx, int(spi.PriorityCritical))
	}
	return resumed, err
}

// PausedTasks returns the paused tasks, ordered by name. It implements
// [spi.TaskPauser].
func (c Core[T]) PausedTasks(ctx context.Context) ([]spi.PausedTask, error) {
	var out []spi.PausedTask
	err := c.do("read paused tasks", func() error {
		out = nil
		q, _ := c.cfg.D.Syntax.SQL("SELECT task_name, paused_time FROM {pause} ORDER BY task_name")
		rows, err := c.cfg.DB.QueryContext(ctx, q)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var task sql.NullString
			var since any
			if err := rows.Scan(&task, &since); err != nil {
				return err
			}
			t, err := c.cfg.D.timeOf(since)
			if err != nil {
				return fmt.Errorf("the pause of task %q: unreadable time: %w", task.String, err)
			}
			out = append(out, spi.PausedTask{Task: task.String, Since: t})
		}
		return rows.Err()
	})
	return out, err
}

// notPaused is the condition of a claim's scan of one task's jobs that
// passes over them all while the task is paused: an uncorrelated probe of
// scheduler_task_pause's primary key, with the task's name as its one
// argument, which the databases evaluate once per scan.
const notPaused = "\n\t\tAND NOT EXISTS (SELECT 1 FROM {pause} p WHERE p.task_name = ?)"
