package privatedb

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/ratchet-go/ratchet/internal/tcpproxy"
)

// PGOptions says what StartPostgres builds.
type PGOptions struct {
	// Dir is the cluster's folder, created when missing; it must not hold
	// a cluster already, and the server's user must be able to reach it.
	// Empty is a new temporary folder.
	Dir string
	// Standby adds a streaming standby of the primary, which Failover
	// promotes.
	Standby bool
	// Async leaves the replication asynchronous; by default a commit waits
	// until the standby has it (synchronous_standby_names = '*').
	Async bool
	// ReplicationDelay, when positive, has the standby stream from the
	// primary through a proxy of this process that delivers every chunk
	// that long after it was sent (a slow network between the two): an
	// asynchronous standby then trails the primary by at least that, and
	// a failover loses what the primary committed in that window. The
	// proxy lives as long as this process and the PG value: a cluster
	// reopened with OpenPostgres streams directly.
	ReplicationDelay time.Duration
}

// PG is a private PostgreSQL server, or a primary and its standby. Its
// zero value is not usable: StartPostgres or OpenPostgres returns one.
type PG struct {
	Dir     string `json:"dir"`
	Bin     string `json:"bin"`     // the folder of initdb, pg_ctl and pg_basebackup
	Ports   []int  `json:"ports"`   // the servers' ports: one, or the two of a pair
	Primary int    `json:"primary"` // the index in Ports of the primary
	Sync    bool   `json:"sync"`    // synchronous replication (a pair only)

	run   runner
	delay time.Duration   // PGOptions.ReplicationDelay
	proxy *tcpproxy.Proxy // the standby's way to the primary, with a delay
}

// FailoverTimes are how long a failover took, in its steps.
type FailoverTimes struct {
	// Promoted is when the standby accepted writes.
	Promoted time.Time
	// Down is the time from the stop of the primary to the promotion.
	Down time.Duration
	// Rebuilt is the time from the promotion until the old primary was a
	// streaming standby of the new one again (synchronous, when the
	// replication is).
	Rebuilt time.Duration
}

// StartPostgres creates and starts a private PostgreSQL server, with a
// standby when opts.Standby. It wraps ErrMissing when PostgreSQL's server
// packages are not installed.
func StartPostgres(ctx context.Context, opts PGOptions) (*PG, error) {
	initdb, err := findBin("initdb", "/usr/lib/postgresql/*/bin/initdb")
	if err != nil {
		return nil, err
	}
	run, err := runnerFor("postgres")
	if err != nil {
		return nil, err
	}
	n := 1
	if opts.Standby {
		n = 2
	}
	ports, err := freePorts(n)
	if err != nil {
		return nil, err
	}
	dir, err := clusterDir(opts.Dir, "ratchet-pg-", run)
	if err != nil {
		return nil, err
	}
	p := &PG{Dir: dir, Bin: filepath.Dir(initdb), Ports: ports, Sync: opts.Standby && !opts.Async, run: run, delay: opts.ReplicationDelay}
	if err := p.build(ctx, initdb, opts.Standby); err != nil {
		_ = p.Stop(context.Background())
		return nil, err
	}
	return p, nil
}

// build makes and starts the primary and, with standby, its standby.
func (p *PG) build(ctx context.Context, initdb string, standby bool) error {
	run := p.run
	data := p.data(0)
	if err := run.own(data, 0o700); err != nil {
		return err
	}
	if err := run.run(ctx, initdb, "-D", data, "-U", "postgres", "-A", "trust", "--no-sync", "-E", "UTF8"); err != nil {
		return fmt.Errorf("privatedb: %w", err)
	}
	conf := "\n# privatedb\nwal_level = replica\nmax_wal_senders = 10\nwal_keep_size = '128MB'\nhot_standby = on\nshared_buffers = 32MB\nmax_connections = 200\nfsync = off\n"
	if err := appendFile(filepath.Join(data, "postgresql.conf"), conf); err != nil {
		return err
	}
	if err := save(p.Dir, p); err != nil {
		return err
	}
	if err := p.start(ctx, 0); err != nil {
		return err
	}
	if standby {
		if err := p.addStandby(ctx); err != nil {
			return err
		}
	}
	return nil
}

// OpenPostgres returns the cluster that StartPostgres made in dir, as its
// last step left it.
func OpenPostgres(dir string) (*PG, error) {
	p := &PG{}
	run, err := load(dir, "postgres", p)
	p.run = run
	return p, err
}

// DSN is the URL of database db ("postgres" always exists) on the
// cluster: for a pair, both hosts with target_session_attrs=read-write, so
// that a client reaches whichever server is the primary.
func (p *PG) DSN(db string) string {
	q := "sslmode=disable&connect_timeout=5"
	if len(p.Ports) > 1 {
		q += "&target_session_attrs=read-write"
	}
	return fmt.Sprintf("postgres://postgres@%s/%s?%s", hostList(p.Ports), db, q)
}

// PrimaryPort is the port of the server that is the primary now.
func (p *PG) PrimaryPort() int { return p.Ports[p.Primary] }

// Restart restarts the primary (a fast shutdown) and returns once it
// accepts connections again.
func (p *PG) Restart(ctx context.Context) error {
	return p.ctl(ctx, p.Primary, "restart", "-m", "fast")
}

// Failover stops the primary as a crash would (-m immediate), promotes
// the standby, and then copies the old primary afresh from the new one as
// its standby (turning synchronous replication on again once it streams),
// so that the cluster can fail over again.
func (p *PG) Failover(ctx context.Context) (FailoverTimes, error) {
	var t FailoverTimes
	if len(p.Ports) < 2 {
		return t, errors.New("privatedb: a failover needs a standby (PGOptions.Standby)")
	}
	old, next := p.Primary, 1-p.Primary
	began := time.Now()
	if err := p.ctl(ctx, old, "stop", "-m", "immediate"); err != nil {
		return t, err
	}
	if err := p.ctl(ctx, next, "promote"); err != nil {
		return t, err
	}
	t.Promoted = time.Now()
	t.Down = t.Promoted.Sub(began)
	p.Primary = next
	if err := save(p.Dir, p); err != nil {
		return t, err
	}
	if err := os.RemoveAll(p.data(old)); err != nil {
		return t, err
	}
	if err := p.addStandby(ctx); err != nil {
		return t, err
	}
	t.Rebuilt = time.Since(t.Promoted)
	return t, nil
}

// Stop stops every server of the cluster and removes its folder.
func (p *PG) Stop(ctx context.Context) error {
	if p.proxy != nil {
		defer p.proxy.Close()
	}
	var errs []error
	for i := range p.Ports {
		if _, err := os.Stat(filepath.Join(p.data(i), "postmaster.pid")); err == nil {
			errs = append(errs, p.ctl(ctx, i, "stop", "-m", "immediate"))
		}
	}
	errs = append(errs, os.RemoveAll(p.Dir))
	return errors.Join(errs...)
}

// addStandby copies the primary into the other server's folder with
// pg_basebackup, starts it as a streaming standby and, when the
// replication is synchronous, turns that on at the primary.
func (p *PG) addStandby(ctx context.Context) error {
	i := 1 - p.Primary
	data := p.data(i)
	if err := p.run.own(data, 0o700); err != nil {
		return err
	}
	err := p.run.run(ctx, filepath.Join(p.Bin, "pg_basebackup"), "-h", "127.0.0.1", "-p", fmt.Sprint(p.PrimaryPort()),
		"-U", "postgres", "-D", data, "-R", "-X", "stream", "-d", fmt.Sprintf("application_name=n%d", i), "--checkpoint=fast")
	if err != nil {
		return fmt.Errorf("privatedb: %w", err)
	}
	// The standby never inherits the primary's synchronous setting; with
	// a delay it streams through a delaying proxy.
	auto := filepath.Join(data, "postgresql.auto.conf")
	if b, err := os.ReadFile(auto); err == nil {
		var keep []string
		for _, line := range strings.Split(string(b), "\n") {
			if !strings.HasPrefix(strings.TrimSpace(line), "synchronous_standby_names") {
				keep = append(keep, line)
			}
		}
		text := strings.Join(keep, "\n")
		if p.delay > 0 {
			if p.proxy != nil {
				p.proxy.Close()
			}
			p.proxy, err = tcpproxy.Start(fmt.Sprintf("127.0.0.1:%d", p.PrimaryPort()), tcpproxy.Options{Serve: delayLine(p.delay)})
			if err != nil {
				return err
			}
			_, port, _ := strings.Cut(p.proxy.Addr(), ":")
			text = conninfoPort.ReplaceAllString(text, "port="+port)
		}
		if err := os.WriteFile(auto, []byte(text), 0o600); err != nil {
			return err
		}
	}
	if err := p.start(ctx, i); err != nil {
		return err
	}
	if err := p.await(ctx, "streaming", `SELECT count(*) FROM pg_stat_replication WHERE state = 'streaming'`); err != nil {
		return err
	}
	if !p.Sync {
		return nil
	}
	if err := p.exec(ctx, `ALTER SYSTEM SET synchronous_standby_names = '*'`, `SELECT pg_reload_conf()`); err != nil {
		return err
	}
	return p.await(ctx, "synchronous", `SELECT count(*) FROM pg_stat_replication WHERE sync_state = 'sync'`)
}

// await polls the primary with a count query until it is positive, for at
// most 30 s.
func (p *PG) await(ctx context.Context, what, query string) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	var last error
	for {
		var n int
		conn, err := pgx.Connect(ctx, p.serverDSN(p.Primary))
		if err == nil {
			err = conn.QueryRow(ctx, query).Scan(&n)
			_ = conn.Close(context.Background())
			if err == nil && n > 0 {
				return nil
			}
		}
		if err != nil {
			last = err
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("privatedb: the standby is not %s after 30s: %w", what, errors.Join(ctx.Err(), last))
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// exec runs statements on the primary.
func (p *PG) exec(ctx context.Context, stmts ...string) error {
	conn, err := pgx.Connect(ctx, p.serverDSN(p.Primary))
	if err != nil {
		return fmt.Errorf("privatedb: %w", err)
	}
	defer func() { _ = conn.Close(context.Background()) }()
	for _, s := range stmts {
		if _, err := conn.Exec(ctx, s); err != nil {
			return fmt.Errorf("privatedb: %s: %w", s, err)
		}
	}
	return nil
}

// serverDSN is the URL of server i alone.
func (p *PG) serverDSN(i int) string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable&connect_timeout=5", p.Ports[i])
}

// data is server i's data folder.
func (p *PG) data(i int) string { return filepath.Join(p.Dir, fmt.Sprintf("n%d", i)) }

// start starts server i and returns once it accepts connections.
func (p *PG) start(ctx context.Context, i int) error { return p.ctl(ctx, i, "start") }

// ctl runs pg_ctl's action on server i, waiting for it to complete.
func (p *PG) ctl(ctx context.Context, i int, action string, extra ...string) error {
	// The sockets live outside the data folders, which pg_basebackup
	// copies with their lock files.
	sockets := filepath.Join(p.Dir, "sockets")
	if err := p.run.own(sockets, 0o755); err != nil {
		return err
	}
	opts := fmt.Sprintf("-p %d -k %s -c listen_addresses=127.0.0.1", p.Ports[i], sockets)
	log := filepath.Join(p.Dir, fmt.Sprintf("n%d.log", i))
	args := []string{"-D", p.data(i), "-o", opts, "-l", log, "-w", "-t", "60", action}
	if err := p.run.run(ctx, filepath.Join(p.Bin, "pg_ctl"), append(args, extra...)...); err != nil {
		b, _ := os.ReadFile(log)
		return fmt.Errorf("privatedb: %w\nthe server's log ends:\n%s", err, tail(b, 1500))
	}
	return nil
}

// conninfoPort is the port of primary_conninfo, which pg_basebackup -R
// writes.
var conninfoPort = regexp.MustCompile(`port=\d+`)

// delayLine carries a connection's bytes both ways, each chunk delivered
// d after it was read, without holding back the chunks behind it.
func delayLine(d time.Duration) func(client, server net.Conn) {
	type chunk struct {
		at   time.Time
		data []byte
	}
	pipe := func(dst, src net.Conn, done chan<- struct{}) {
		defer func() { done <- struct{}{} }()
		q := make(chan chunk, 4096)
		go func() {
			defer close(q)
			for {
				buf := make([]byte, 32<<10)
				n, err := src.Read(buf)
				if n > 0 {
					q <- chunk{time.Now().Add(d), buf[:n]}
				}
				if err != nil {
					return
				}
			}
		}()
		for c := range q {
			if wait := time.Until(c.at); wait > 0 {
				<-time.After(wait)
			}
			if _, err := dst.Write(c.data); err != nil {
				_ = src.Close()
				for range q {
				}
				return
			}
		}
		_ = dst.Close()
	}
	return func(client, server net.Conn) {
		done := make(chan struct{}, 2)
		go pipe(server, client, done)
		go pipe(client, server, done)
		<-done
		_ = client.Close()
		_ = server.Close()
		<-done
	}
}

// appendFile appends text to the file at path.
func appendFile(path, text string) error {
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	if _, err := f.WriteString(text); err != nil {
		_ = f.Close()
		return err
	}
	return f.Close()
}
