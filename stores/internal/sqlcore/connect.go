package sqlcore

import (
	"context"
	"database/sql"
	"errors"
	"time"
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
