package fakesql_test

import (
	"context"
	"database/sql/driver"
	"errors"
	"testing"

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
