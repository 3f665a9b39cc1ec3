package sqlcore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
)

// Ping checks that db answers within timeout, or until ctx ends (the error
// then joins ctx's): the first contact of a store's Open with its server.
func Ping(ctx context.Context, db *sql.DB, timeout time.Duration) error {
	pctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	err := db.PingContext(pctx)
	if err != nil && ctx.Err() != nil {
		err = errors.Join(ctx.Err(), err)
	}
	return err
}

// Connected returns db once it answers within timeout (see Ping); when it
// does not, it closes db and fails with an error that names the store, the
// operation and the server (never a password).
func Connected(ctx context.Context, db *sql.DB, timeout time.Duration, store, op, server string) (*sql.DB, error) {
	if err := Ping(ctx, db, timeout); err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("%s: %s: cannot connect to %s: %w", store, op, server, err)
	}
	return db, nil
}

// MigrateWith opens a pool with connect, runs migrate on it and closes it:
// a store's MigrateDSN.
func MigrateWith(ctx context.Context, connect func() (*sql.DB, error), migrate func(context.Context, *sql.DB) ([]int, error)) ([]int, error) {
	db, err := connect()
	if err != nil {
		return nil, err
	}
	defer db.Close()
	return migrate(ctx, db)
}

// ReadySchema brings db's schema up to date with migrate when apply is
// set, else fails unless check finds it current: the schema step of a
// store's Open and New.
func ReadySchema(ctx context.Context, db *sql.DB, apply bool, migrate func(context.Context, *sql.DB) ([]int, error), check func(context.Context, *sql.DB) error) error {
	if apply {
		_, err := migrate(ctx, db)
		return err
	}
	return check(ctx, db)
}

// RetryCount is a store's Options.Retries as its retry loop takes it: def
// for zero, none for a negative count.
func RetryCount(n, def int) int {
	switch {
	case n == 0:
		return def
	case n < 0:
		return 0
	}
	return n
}

// OpenStore is the end of a store's Open: it opens a pool with connect and
// builds the store on it with build (the store owns the pool from then
// on), closing the pool when build fails.
func OpenStore[S any](connect func() (*sql.DB, error), build func(db *sql.DB) (S, error)) (S, error) {
	db, err := connect()
	if err != nil {
		var zero S
		return zero, err
	}
	s, err := build(db)
	if err != nil {
		_ = db.Close()
	}
	return s, err
}

// CaseNull is the NULL flag of a column (payload, job_result) as a CASE
// expression, for the JobColumns of a dialect whose driver may return nil
// for an empty binary value.
func CaseNull(col string) string { return "CASE WHEN j." + col + " IS NULL THEN 1 ELSE 0 END" }

// BinaryIDText names a stored binary id in messages: the UUID of 16 bytes,
// else the bytes in hex as format (for example "0x%X") renders them.
func BinaryIDText(format string) func(id []byte) string {
	return func(id []byte) string {
		switch len(id) {
		case 16:
			return uuid.UUID(id).String()
		case 0:
			return "(unknown id)"
		}
		return fmt.Sprintf(format, id)
	}
}
