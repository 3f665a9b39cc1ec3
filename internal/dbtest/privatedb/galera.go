package privatedb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/go-sql-driver/mysql"
)

// GaleraOptions says what StartGalera builds.
type GaleraOptions struct {
	// Dir is the cluster's folder, created when missing; it must not hold
	// a cluster already. Empty is a new temporary folder.
	Dir string
}

// Galera is a private three-node MariaDB Galera cluster. Its zero value is
// not usable: StartGalera or OpenGalera returns one.
type Galera struct {
	Dir      string `json:"dir"`
	Server   string `json:"server"`   // mariadbd
	Provider string `json:"provider"` // libgalera_smm.so
	Ports    []int  `json:"ports"`    // the nodes' client ports
	// Group are each node's group communication, incremental transfer
	// and snapshot transfer ports.
	Group [][3]int `json:"group"`

	run runner
}

// galeraNodes is the size of the cluster: the smallest that keeps a quorum
// after losing a node.
const galeraNodes = 3

// galeraSynced bounds the wait for a node to join and sync.
const galeraSynced = 3 * time.Minute

// StartGalera creates and starts a three-node Galera cluster: node 0
// bootstraps it and the others join by snapshot transfer (rsync). It wraps
// ErrMissing when MariaDB's server, the galera-4 provider or rsync is
// missing. A database test exists, and root@% without a password.
func StartGalera(ctx context.Context, opts GaleraOptions) (*Galera, error) {
	server, err := findBin("mariadbd", "/usr/sbin/mariadbd")
	if err != nil {
		return nil, err
	}
	provider, err := findBin("libgalera_smm.so", "/usr/lib/*/libgalera_smm.so")
	if err != nil {
		if provider, err = findBin("libgalera_smm.so", "/usr/lib/galera/libgalera_smm.so"); err != nil {
			return nil, fmt.Errorf("%w (apt-get install galera-4)", err)
		}
	}
	if _, err := findBin("rsync", "/usr/bin/rsync"); err != nil {
		return nil, err
	}
	if _, err := findBin("mariadb-install-db", "/usr/bin/mariadb-install-db"); err != nil {
		return nil, err
	}
	run, err := runnerFor("mysql")
	if err != nil {
		return nil, err
	}
	ports, err := freePorts(galeraNodes * 4)
	if err != nil {
		return nil, err
	}
	dir, err := clusterDir(opts.Dir, "ratchet-galera-", run)
	if err != nil {
		return nil, err
	}
	g := &Galera{Dir: dir, Server: server, Provider: provider, Ports: ports[:galeraNodes], run: run}
	for i := range galeraNodes {
		g.Group = append(g.Group, [3]int{ports[galeraNodes+3*i], ports[galeraNodes+3*i+1], ports[galeraNodes+3*i+2]})
	}
	if err := save(g.Dir, g); err != nil {
		return nil, err
	}
	if err := g.build(ctx); err != nil {
		_ = g.Stop(context.Background())
		return nil, err
	}
	return g, nil
}

// build creates the nodes' folders and starts the nodes: node 0 as the
// new cluster, the others joining it.
func (g *Galera) build(ctx context.Context) error {
	run := g.run
	for i := range galeraNodes {
		if err := run.own(g.data(i), 0o700); err != nil {
			return err
		}
		if err := os.WriteFile(g.conf(i), []byte(g.config(i)), 0o644); err != nil {
			return err
		}
	}
	if err := run.run(ctx, "mariadb-install-db", "--no-defaults", "--datadir="+g.data(0),
		"--auth-root-authentication-method=normal", "--skip-test-db"); err != nil {
		return fmt.Errorf("privatedb: %w", err)
	}
	if err := g.start(ctx, 0, "--wsrep-new-cluster"); err != nil {
		return err
	}
	if err := g.exec(ctx, 0, "CREATE USER IF NOT EXISTS 'root'@'%'", "GRANT ALL ON *.* TO 'root'@'%' WITH GRANT OPTION",
		"CREATE DATABASE IF NOT EXISTS test"); err != nil {
		return err
	}
	for i := 1; i < galeraNodes; i++ {
		if err := g.start(ctx, i); err != nil {
			return err
		}
	}
	return nil
}

// OpenGalera returns the cluster that StartGalera made in dir, as its last
// step left it.
func OpenGalera(dir string) (*Galera, error) {
	g := &Galera{}
	run, err := load(dir, "mysql", g)
	g.run = run
	return g, err
}

// DSN is the mysql:// URL of database db on every node, in order: the
// MySQL store connects to the first that answers and stays on it until it
// fails (one writer at a time).
func (g *Galera) DSN(db string) string {
	return fmt.Sprintf("mysql://root@%s/%s", hostList(g.Ports), db)
}

// NodeAddr is node i's client address, host:port.
func (g *Galera) NodeAddr(i int) string { return fmt.Sprintf("127.0.0.1:%d", g.Ports[i]) }

// Kill kills node i with SIGKILL and returns once it has exited.
func (g *Galera) Kill(i int) error {
	pid := g.pids()[i]
	if pid == 0 {
		return fmt.Errorf("privatedb: galera node %d is not running", i)
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
		return err
	}
	if !awaitExit(pid, 10*time.Second) {
		return fmt.Errorf("privatedb: galera node %d (pid %d) still runs 10s after SIGKILL", i, pid)
	}
	return nil
}

// Busiest is the running node with the most client connections
// (Threads_connected): the one a single-writer fleet writes through.
func (g *Galera) Busiest(ctx context.Context) (int, error) {
	best, most := -1, -1
	for i, pid := range g.pids() {
		if pid == 0 {
			continue
		}
		v, err := g.status(ctx, i, "Threads_connected")
		if err != nil {
			continue
		}
		var n int
		_, _ = fmt.Sscan(v, &n)
		if n > most {
			best, most = i, n
		}
	}
	if best < 0 {
		return 0, errors.New("privatedb: no galera node answers")
	}
	return best, nil
}

// Down is the first node that is not running, or -1.
func (g *Galera) Down() int {
	for i, pid := range g.pids() {
		if pid == 0 {
			return i
		}
	}
	return -1
}

// Conflicts are, for each node, the transactions aborted by a conflict
// with another node's (wsrep_local_cert_failures and
// wsrep_local_bf_aborts) since the node started, 0 for a node that is
// down: the price of writing through several nodes. ConflictsBetween
// counts those of an interval.
func (g *Galera) Conflicts(ctx context.Context) ([]int64, error) {
	out := make([]int64, len(g.Ports))
	for i, pid := range g.pids() {
		if pid == 0 {
			continue
		}
		for _, name := range []string{"wsrep_local_cert_failures", "wsrep_local_bf_aborts"} {
			v, err := g.status(ctx, i, name)
			if err != nil {
				return nil, err
			}
			var n int64
			_, _ = fmt.Sscan(v, &n)
			out[i] += n
		}
	}
	return out, nil
}

// ConflictsBetween is the number of conflicts between two readings of
// Conflicts: a node whose count went down was restarted in between, and
// counts from zero (what it counted before its loss is not known).
func ConflictsBetween(before, after []int64) int64 {
	var n int64
	for i := range after {
		if i < len(before) && after[i] >= before[i] {
			n += after[i] - before[i]
		} else {
			n += after[i]
		}
	}
	return n
}

// Rejoin starts node i again after a kill: it recovers the node's last
// committed position (mariadbd --wsrep-recover) so that it rejoins by
// incremental transfer, and returns once the node is synced.
func (g *Galera) Rejoin(ctx context.Context, i int) error {
	if g.pids()[i] != 0 {
		return fmt.Errorf("privatedb: galera node %d is running", i)
	}
	var extra []string
	if pos := g.recoverPosition(ctx, i); pos != "" {
		extra = append(extra, "--wsrep-start-position="+pos)
	}
	return g.start(ctx, i, extra...)
}

// galeraRecover bounds mariadbd --wsrep-recover.
const galeraRecover = time.Minute

// recoverPosition runs mariadbd --wsrep-recover on node i and returns the
// position it logs, "" when it logs none. The recovery does not always
// exit once it has logged the position (seen with MariaDB 10.11: it went
// on listening and grew to 23 GB in 7 minutes): it runs without
// networking, and is killed as soon as the position is in its log, or
// after galeraRecover.
func (g *Galera) recoverPosition(ctx context.Context, i int) string {
	log := filepath.Join(g.Dir, fmt.Sprintf("n%d-recover.log", i))
	_ = os.Remove(log)
	ctx, cancel := context.WithTimeout(ctx, galeraRecover)
	defer cancel()
	cmd := g.run.command(ctx, g.Server, "--defaults-file="+g.conf(i), "--wsrep-recover", "--skip-networking", "--log-error="+log)
	if err := cmd.Start(); err != nil {
		return ""
	}
	ended := make(chan struct{})
	go func() { _ = cmd.Wait(); close(ended) }()
	position := func() string {
		b, _ := os.ReadFile(log)
		if m := recovered.FindAllStringSubmatch(string(b), -1); len(m) > 0 {
			if pos := m[len(m)-1][1]; !strings.HasSuffix(pos, ":-1") {
				return pos
			}
		}
		return ""
	}
	for {
		select {
		case <-ended:
			return position()
		case <-ctx.Done():
			<-ended // CommandContext killed it
			return position()
		case <-time.After(100 * time.Millisecond):
		}
		if pos := position(); pos != "" {
			cancel()
			<-ended
			return pos
		}
	}
}

// Ready rejoins every node that is down and waits until every node is
// synced and ready for clients (wsrep_ready ON): the state a run starts
// from, whatever the last one left.
func (g *Galera) Ready(ctx context.Context) error {
	for i, pid := range g.pids() {
		if pid == 0 {
			if err := g.Rejoin(ctx, i); err != nil {
				return err
			}
		}
	}
	deadline := time.After(galeraSynced)
	for i := range g.Ports {
		for {
			state, _ := g.status(ctx, i, "wsrep_local_state_comment")
			ready, _ := g.status(ctx, i, "wsrep_ready")
			if state == "Synced" && ready == "ON" {
				break
			}
			select {
			case <-deadline:
				return fmt.Errorf("privatedb: galera node %d not ready after %s (state %q, wsrep_ready %q)", i, galeraSynced, state, ready)
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(250 * time.Millisecond):
			}
		}
	}
	return nil
}

// pids are the processes of the nodes that run now (0 for a node that
// does not), found by their command lines: whichever process started them
// (this one, or a step run as a command), and never another cluster's.
func (g *Galera) pids() []int {
	out := make([]int, len(g.Ports))
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, f := range procs {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		args := strings.Split(string(b), "\x00")
		for i := range g.Ports {
			if slices.Contains(args, "--defaults-file="+g.conf(i)) && !slices.Contains(args, "--wsrep-recover") {
				var pid int
				_, _ = fmt.Sscanf(filepath.Base(filepath.Dir(f)), "%d", &pid)
				if !exited(pid) {
					out[i] = pid
				}
			}
		}
	}
	return out
}

// recovered finds the position that --wsrep-recover logs.
var recovered = regexp.MustCompile(`Recovered position: (\S+)`)

// Stop stops every node (the last one first) and removes the folder.
func (g *Galera) Stop(ctx context.Context) error {
	pids := g.pids()
	for i := len(pids) - 1; i >= 0; i-- {
		if pid := pids[i]; pid != 0 {
			_ = syscall.Kill(pid, syscall.SIGTERM)
			if !awaitExit(pid, 30*time.Second) {
				_ = syscall.Kill(pid, syscall.SIGKILL)
				awaitExit(pid, 10*time.Second)
			}
		}
	}
	return os.RemoveAll(g.Dir)
}

// start starts node i in a session of its own (it outlives the calling
// process) and waits until it is synced with the cluster.
func (g *Galera) start(ctx context.Context, i int, extra ...string) error {
	out, err := os.OpenFile(filepath.Join(g.Dir, fmt.Sprintf("n%d.out", i)), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	defer out.Close()
	cmd := g.run.command(context.Background(), g.Server, append([]string{"--defaults-file=" + g.conf(i)}, extra...)...)
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("privatedb: start galera node %d: %w", i, err)
	}
	ended := make(chan error, 1)
	go func() { ended <- cmd.Wait() }()
	deadline := time.After(galeraSynced)
	for {
		select {
		case err := <-ended:
			return fmt.Errorf("privatedb: galera node %d exited while starting (%v); its log ends:\n%s", i, err, g.logTail(i))
		case <-deadline:
			return fmt.Errorf("privatedb: galera node %d not synced after %s; its log ends:\n%s", i, galeraSynced, g.logTail(i))
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
		if state, _ := g.status(ctx, i, "wsrep_local_state_comment"); state == "Synced" {
			return nil
		}
	}
}

// status reads a global status variable of node i over its socket.
func (g *Galera) status(ctx context.Context, i int, name string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	db, err := g.open(i)
	if err != nil {
		return "", err
	}
	defer db.Close()
	var k, v string
	err = db.QueryRowContext(ctx, "SHOW GLOBAL STATUS LIKE '"+name+"'").Scan(&k, &v)
	return v, err
}

// exec runs statements on node i over its socket.
func (g *Galera) exec(ctx context.Context, i int, stmts ...string) error {
	db, err := g.open(i)
	if err != nil {
		return err
	}
	defer db.Close()
	for _, s := range stmts {
		if _, err := db.ExecContext(ctx, s); err != nil {
			return fmt.Errorf("privatedb: galera node %d: %s: %w", i, s, err)
		}
	}
	return nil
}

// open is a pool of one connection to node i over its socket, as root.
func (g *Galera) open(i int) (*sql.DB, error) {
	cfg := mysql.NewConfig()
	cfg.User, cfg.Net, cfg.Addr, cfg.Timeout = "root", "unix", g.socket(i), 2*time.Second
	conn, err := mysql.NewConnector(cfg)
	if err != nil {
		return nil, err
	}
	db := sql.OpenDB(conn)
	db.SetMaxOpenConns(1)
	return db, nil
}

// config is node i's my.cnf. The cluster's name carries its first group
// port, so that a node of another private cluster never joins it. A node
// silent for 30 s (not Galera's 15) is declared inactive: on a loaded
// test machine a live node can stall that long, and the cluster would lose
// its quorum; a killed node is still suspected after 5 s.
func (g *Galera) config(i int) string {
	var peers []string
	for _, gr := range g.Group {
		peers = append(peers, fmt.Sprintf("127.0.0.1:%d", gr[0]))
	}
	gr := g.Group[i]
	return fmt.Sprintf(`[mysqld]
datadir=%s
socket=%s
pid-file=%s
log-error=%s
port=%d
bind-address=127.0.0.1
skip-name-resolve
performance_schema=OFF
innodb_buffer_pool_size=64M
innodb_log_file_size=48M
innodb_flush_log_at_trx_commit=2
max_connections=300
binlog_format=ROW
default_storage_engine=InnoDB
innodb_autoinc_lock_mode=2
wsrep_on=ON
wsrep_provider=%s
wsrep_cluster_name=ratchet_%d
wsrep_cluster_address=gcomm://%s
wsrep_node_name=n%d
wsrep_node_address=127.0.0.1:%d
wsrep_node_incoming_address=127.0.0.1:%d
wsrep_provider_options="gmcast.listen_addr=tcp://127.0.0.1:%d;ist.recv_addr=127.0.0.1:%d;gcache.size=64M;evs.inactive_timeout=PT30S"
wsrep_sst_method=rsync
wsrep_sst_receive_address=127.0.0.1:%d
wsrep_slave_threads=2
`, g.data(i), g.socket(i), filepath.Join(g.Dir, fmt.Sprintf("n%d.pid", i)), g.log(i), g.Ports[i],
		g.Provider, g.Group[0][0], strings.Join(peers, ","), i, gr[0], g.Ports[i], gr[0], gr[1], gr[2])
}

func (g *Galera) data(i int) string   { return filepath.Join(g.Dir, fmt.Sprintf("n%d", i)) }
func (g *Galera) conf(i int) string   { return filepath.Join(g.Dir, fmt.Sprintf("n%d.cnf", i)) }
func (g *Galera) socket(i int) string { return filepath.Join(g.Dir, fmt.Sprintf("n%d.sock", i)) }
func (g *Galera) log(i int) string    { return filepath.Join(g.Dir, fmt.Sprintf("n%d.err", i)) }

// logTail is the end of node i's error log.
func (g *Galera) logTail(i int) string {
	b, _ := os.ReadFile(g.log(i))
	return tail(b, 2000)
}

// awaitExit waits until the process pid is gone, for at most d, and tells
// whether it is.
func awaitExit(pid int, d time.Duration) bool {
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(d)
	for !exited(pid) {
		select {
		case <-tick.C:
		case <-deadline:
			return false
		}
	}
	return true
}

// exited reports whether the process pid is gone or a zombie (a child of
// this process stays one until it is reaped).
func exited(pid int) bool {
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return true
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	stat := string(b)
	i := strings.LastIndexByte(stat, ')')
	return i >= 0 && strings.HasPrefix(stat[i+1:], " Z")
}
