package mysql

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/ratchet-go/ratchet/tck/storetest"
)

// FuzzParseDSN: a DSN (a mysql:// URL or the driver's own form) either
// parses or fails with an error that never quotes its password.
func FuzzParseDSN(f *testing.F) {
	f.Add("mysql://", "root", "s3cret", "127.0.0.1:3306", "test", "parseTime=true")
	f.Add("", "root", "p@ss:w/rd", "tcp(db:3306)", "ratchet", "")
	f.Add("mysql://", "u", "pw%zz", "[::1]", "x/y", "a=%zz")
	f.Add("mysql://", "", "secret-but-no-user", "host:notaport", "db", "timeout=zz")
	f.Fuzz(func(t *testing.T, scheme, user, password, addr, db, query string) {
		var dsn string
		if scheme == "mysql://" {
			dsn = scheme + user + ":" + password + "@" + addr + "/" + db
		} else {
			dsn = user + ":" + password + "@" + addr + "/" + db
		}
		if query != "" {
			dsn += "?" + query
		}
		_, err := parseDSN(dsn)
		if err == nil || len(password) < 4 || strings.Contains(user+addr+db+query, password) {
			return
		}
		if strings.Contains(err.Error(), password) {
			t.Fatalf("parseDSN(%q): the error %q shows the password", dsn, err)
		}
	})
}

// FuzzJobRowDecoder overwrites one column of a job row with any value
// MySQL/MariaDB takes for the column (a string it converts, or bytes) and
// reads the job back: never a panic, a corrupt row reported as such
// (storetest.CorruptRow).
func FuzzJobRowDecoder(f *testing.F) {
	for i := range 40 {
		f.Add(i, "{not json", false)
		f.Add(i, "-1", false)
		f.Add(i, "", true)
		f.Add(i, "2038-01-19 03:14:07.999999", false)
		f.Add(i, `{"a":[1,{"b":null}]}`, false)
		f.Add(i, "\x00\xff", true)
	}
	s := openStore(f)
	ctx := context.Background()
	rows, err := s.DB().QueryContext(ctx, `SELECT column_name FROM information_schema.columns
		WHERE table_schema = DATABASE() AND table_name = 'scheduler_job' AND column_name <> 'job_id'
		AND extra NOT LIKE '%GENERATED%' ORDER BY ordinal_position`)
	if err != nil {
		f.Fatal(err)
	}
	var cols []string
	for rows.Next() {
		var c string
		if err := rows.Scan(&c); err != nil {
			f.Fatal(err)
		}
		cols = append(cols, c)
	}
	if rows.Err() != nil || len(cols) < 20 {
		f.Fatalf("read %d columns of scheduler_job: %v", len(cols), rows.Err())
	}
	f.Fuzz(func(t *testing.T, i int, v string, asBytes bool) {
		c := cols[((i%len(cols))+len(cols))%len(cols)]
		if n, err := strconv.ParseInt(v, 10, 64); c == "claim_seq" && err == nil && n > 1<<62 {
			return // unreachable, and claim_seq + 1 would overflow (see the PostgreSQL store's target)
		}
		var val any = v
		if asBytes {
			val = []byte(v)
		}
		storetest.CorruptRow(t, s, func(ctx context.Context, id uuid.UUID) error {
			_, err := s.DB().ExecContext(ctx, "UPDATE scheduler_job SET "+c+" = ? WHERE job_id = ?", val, id[:])
			return err
		}, func(ctx context.Context, id uuid.UUID) error {
			_, err := s.DB().ExecContext(ctx, "DELETE FROM scheduler_job WHERE job_id = ?", id[:])
			return err
		})
	})
}
