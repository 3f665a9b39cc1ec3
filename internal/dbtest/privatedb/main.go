package privatedb

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
)

// Usage is the command line that Main takes.
const Usage = `usage:
  postgres start DIR [standby|async]   a server; with a streaming standby (synchronous, or async)
  postgres restart DIR                 restart the primary (a fast shutdown)
  postgres failover DIR                stop the primary as a crash would, promote the standby, make a new standby
  galera start DIR                     a three-node MariaDB Galera cluster
  galera kill DIR [N]                  SIGKILL node N (by default the one with the most client connections)
  galera rejoin DIR [N]                restart node N (by default the one that is down) and wait until it is synced
  postgres|galera stop DIR             stop every server and remove DIR`

// Main runs one step on a private cluster from a command line (see
// Usage): the form in which the chaos harness runs a failover or a node
// loss as a command. A start prints the cluster's DSN on out.
func Main(ctx context.Context, args []string, out io.Writer) error {
	if len(args) < 3 {
		return errors.New(Usage)
	}
	kind, step, dir := args[0], args[1], args[2]
	rest := args[3:]
	switch kind {
	case "postgres":
		if step == "start" {
			opt := ""
			if len(rest) > 0 {
				opt = rest[0]
			}
			p, err := StartPostgres(ctx, PGOptions{Dir: dir, Standby: opt == "standby" || opt == "async", Async: opt == "async"})
			if err != nil {
				return err
			}
			_, err = fmt.Fprintln(out, p.DSN("postgres"))
			return err
		}
		p, err := OpenPostgres(dir)
		if err != nil {
			return err
		}
		switch step {
		case "restart":
			return p.Restart(ctx)
		case "failover":
			t, err := p.Failover(ctx)
			if err != nil {
				return err
			}
			_, err = fmt.Fprintf(out, "promoted in %s; new standby in %s\n", t.Down, t.Rebuilt)
			return err
		case "stop":
			return p.Stop(ctx)
		}
	case "galera":
		if step == "start" {
			g, err := StartGalera(ctx, GaleraOptions{Dir: dir})
			if err != nil {
				return err
			}
			_, err = fmt.Fprintln(out, g.DSN("test"))
			return err
		}
		g, err := OpenGalera(dir)
		if err != nil {
			return err
		}
		n := -1
		if len(rest) > 0 {
			if n, err = strconv.Atoi(rest[0]); err != nil || n < 0 || n >= len(g.Ports) {
				return fmt.Errorf("privatedb: node %q: a number from 0 to %d", rest[0], len(g.Ports)-1)
			}
		}
		switch step {
		case "kill":
			if n < 0 {
				if n, err = g.Busiest(ctx); err != nil {
					return err
				}
			}
			return g.Kill(n)
		case "rejoin":
			if n < 0 {
				if n = g.Down(); n < 0 {
					return errors.New("privatedb: every galera node is running")
				}
			}
			return g.Rejoin(ctx, n)
		case "stop":
			return g.Stop(ctx)
		}
	}
	return errors.New(Usage)
}
