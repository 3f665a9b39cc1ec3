package privatedb

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// ErrMissing wraps the error of a start whose server packages are not
// installed: a test skips on it (and fails under CI=true, whose machine
// installs them).
var ErrMissing = errors.New("privatedb: server packages not installed")

// runner runs the servers' commands, as the user the server needs when
// the process is root (PostgreSQL and MariaDB refuse root, or break under
// it).
type runner struct {
	uid, gid int
	prefix   []string // setpriv and its arguments; nil when not root
}

// runnerFor returns the runner of the named system user when the process
// is root, and of the process itself otherwise.
func runnerFor(name string) (runner, error) {
	if os.Geteuid() != 0 {
		return runner{uid: os.Getuid(), gid: os.Getgid()}, nil
	}
	u, err := user.Lookup(name)
	if err != nil {
		return runner{}, fmt.Errorf("privatedb: running as root, the server runs as the %s user: %w", name, err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	setpriv, err := exec.LookPath("setpriv")
	if err != nil {
		return runner{}, fmt.Errorf("privatedb: setpriv runs the server's commands as %s: %w", name, err)
	}
	return runner{uid: uid, gid: gid, prefix: []string{setpriv, "--reuid=" + u.Uid, "--regid=" + u.Gid, "--clear-groups"}}, nil
}

// command is cmd run as the runner's user.
func (r runner) command(ctx context.Context, name string, args ...string) *exec.Cmd {
	full := append(slices.Clone(r.prefix), name)
	full = append(full, args...)
	return exec.CommandContext(ctx, full[0], full[1:]...)
}

// run runs a command and returns its output in the error when it fails.
func (r runner) run(ctx context.Context, name string, args ...string) error {
	out, err := r.command(ctx, name, args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s %s: %w\n%s", filepath.Base(name), strings.Join(args, " "), err, tail(out, 2000))
	}
	return nil
}

// own creates dir (and its parents) and gives it to the runner's user; the
// parents are made traversable.
func (r runner) own(dir string, mode os.FileMode) error {
	if err := os.MkdirAll(dir, mode); err != nil {
		return err
	}
	if err := os.Chmod(dir, mode); err != nil {
		return err
	}
	if os.Geteuid() == 0 {
		return os.Chown(dir, r.uid, r.gid)
	}
	return nil
}

// clusterDir creates a cluster's folder (a new temporary one when dir is
// empty), owned by the server's user, and refuses one that holds a
// cluster.
func clusterDir(dir, pattern string, r runner) (string, error) {
	if dir == "" {
		d, err := os.MkdirTemp("", pattern)
		if err != nil {
			return "", err
		}
		dir = d
	}
	dir, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	if _, err := os.Stat(filepath.Join(dir, stateFile)); err == nil {
		return "", fmt.Errorf("privatedb: %s holds a cluster already", dir)
	}
	if err := r.own(dir, 0o755); err != nil {
		return "", err
	}
	if err := r.command(context.Background(), "test", "-w", dir).Run(); err != nil {
		return "", fmt.Errorf("privatedb: the server's user cannot write %s (a parent folder it cannot reach?)", dir)
	}
	return dir, nil
}

// freePorts returns n distinct free TCP ports of 127.0.0.1.
func freePorts(n int) ([]int, error) {
	var ports []int
	var lns []net.Listener
	defer func() {
		for _, ln := range lns {
			_ = ln.Close()
		}
	}()
	for range n {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("privatedb: a free port: %w", err)
		}
		lns = append(lns, ln)
		ports = append(ports, ln.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// findBin returns the path of a server program: on PATH, or else the
// newest of the glob's matches.
func findBin(name, glob string) (string, error) {
	if p, err := exec.LookPath(name); err == nil {
		// The folder of the real program holds its siblings
		// (pg_basebackup beside initdb), which a link on PATH may not.
		if real, err := filepath.EvalSymlinks(p); err == nil {
			return real, nil
		}
		return p, nil
	}
	found, _ := filepath.Glob(glob)
	slices.Sort(found)
	if len(found) == 0 {
		return "", fmt.Errorf("%w: %s is neither on PATH nor at %s", ErrMissing, name, glob)
	}
	return found[len(found)-1], nil
}

// stateFile is the name of a cluster's state in its folder.
const stateFile = "privatedb.json"

// save writes v as the state of the cluster in dir.
func save(dir string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, stateFile), b, 0o644)
}

// load reads the state of the cluster in dir into v, and returns the
// runner of its servers' user.
func load(dir, user string, v any) (runner, error) {
	b, err := os.ReadFile(filepath.Join(dir, stateFile))
	if err != nil {
		return runner{}, fmt.Errorf("privatedb: no cluster in %s: %w", dir, err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		return runner{}, fmt.Errorf("privatedb: the state of the cluster in %s: %w", dir, err)
	}
	return runnerFor(user)
}

// hostList is the servers of ports on 127.0.0.1, comma-separated, as a
// multi-host DSN lists them.
func hostList(ports []int) string {
	hosts := make([]string, len(ports))
	for i, port := range ports {
		hosts[i] = fmt.Sprintf("127.0.0.1:%d", port)
	}
	return strings.Join(hosts, ",")
}

// tail is the end of a command's output, at most n bytes.
func tail(b []byte, n int) string {
	s := strings.TrimSpace(string(b))
	if len(s) > n {
		s = "..." + s[len(s)-n:]
	}
	return s
}
