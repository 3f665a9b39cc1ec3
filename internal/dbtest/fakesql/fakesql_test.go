package fakesql_test

import (
	"context"
	"database/sql/driver"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratchet-go/ratchet/internal/dbtest/fakesql"
)

type backend struct {
	log     []string
	commits []error
}

func (b *backend) Run(q string, _ []driver.NamedValue) ([]fakesql.Set, int64, error) {
	b.log = append(b.log, q)
	if q == "fail" {
		return nil, 0, errors.New("refused")
	}
	return []fakesql.Set{{Cols: []string{"n"}, Rows: [][]driver.Value{{int64(1)}, {int64(2)}}}}, 3, nil
}
func (b *backend) Record(what string) { b.log = append(b.log, what) }
func (b *backend) Commit() error {
	if len(b.commits) == 0 {
		return nil
	}
	err := b.commits[0]
	b.commits = b.commits[1:]
	return err
}

func TestStatementsReachTheBackend(t *testing.T) {
	ctx := context.Background()
	b := &backend{commits: []error{errors.New("lost")}}
	db := fakesql.Open(b)
	defer db.Close()
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := tx.QueryContext(ctx, "q")
	if err != nil {
		t.Fatal(err)
	}
	var sum int64
	for rows.Next() {
		var n int64
		if err := rows.Scan(&n); err != nil {
			t.Fatal(err)
		}
		sum += n
	}
	rows.Close()
	res, err := tx.ExecContext(ctx, "e")
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := res.RowsAffected(); n != 3 || sum != 3 {
		t.Errorf("affected %d, sum %d", n, sum)
	}
	if _, err := tx.ExecContext(ctx, "fail"); err == nil {
		t.Error("the backend's error must reach the caller")
	}
	if err := tx.Commit(); err == nil || err.Error() != "lost" {
		t.Errorf("commit: %v, want the backend's error", err)
	}
	want := []string{"BEGIN", "q", "e", "fail", "COMMIT"}
	if len(b.log) != len(want) {
		t.Fatalf("log %q, want %q", b.log, want)
	}
	for i := range want {
		if b.log[i] != want[i] {
			t.Fatalf("log %q, want %q", b.log, want)
		}
	}
}

func TestRecorder(t *testing.T) {
	var checked []string
	r := &fakesql.Recorder{
		Check:   func(q string, _ []driver.NamedValue) { checked = append(checked, q) },
		Commits: []error{errors.New("lost")},
		Handler: func(string, []driver.NamedValue) (fakesql.Result, error) {
			return fakesql.Result{Affected: 2}, nil
		},
	}
	db := r.Open()
	defer db.Close()
	tx, err := db.Begin()
	require.NoError(t, err)
	res, err := tx.Exec("UPDATE t\n\tSET x = 1", 7)
	require.NoError(t, err)
	n, _ := res.RowsAffected()
	assert.Equal(t, int64(2), n)
	assert.ErrorContains(t, tx.Commit(), "lost", "the first COMMIT fails as told")
	assert.Equal(t, []string{"BEGIN", "UPDATE t", "COMMIT"}, r.Statements())
	assert.Equal(t, []string{"UPDATE t\n\tSET x = 1"}, checked)
	assert.Equal(t, 7, r.Args[1][0].Value)
	r.Reset()
	assert.Empty(t, r.Statements())
}
