package dbtest

import (
	"errors"
	"strings"
	"testing"
)

// fakeEnv replaces lookupEnv and dockerCheck for one test.
func fakeEnv(t *testing.T, env map[string]string, docker error) {
	t.Helper()
	oldEnv, oldDocker := lookupEnv, dockerCheck
	lookupEnv = func(k string) string { return env[k] }
	dockerCheck = func() error { return docker }
	t.Cleanup(func() { lookupEnv, dockerCheck = oldEnv, oldDocker })
}

func TestSQLServerAndOracleSkipUnderCI(t *testing.T) {
	fakeEnv(t, map[string]string{"CI": "true"}, nil)
	for name, resolve := range map[string]func(*adminServer){
		SQLServerEnv: (*adminServer).resolveSQLServer,
		OracleEnv:    (*adminServer).resolveOracle,
	} {
		var s adminServer
		resolve(&s)
		if s.dsn != "" || s.broken {
			t.Fatalf("%s: dsn %q broken %v", name, s.dsn, s.broken)
		}
		for _, want := range []string{name + " unset", "CI=true"} {
			if !strings.Contains(s.reason, want) {
				t.Errorf("%s: reason %q does not say %q", name, s.reason, want)
			}
		}
		if strings.ContainsAny(s.reason, "\r\n") {
			t.Errorf("%s: reason is not one line: %q", name, s.reason)
		}
	}
}

func TestSQLServerAndOracleSkipWithoutDocker(t *testing.T) {
	fakeEnv(t, map[string]string{}, errors.New("docker provider: Cannot connect to the Docker daemon at unix:///var/run/docker.sock.\nIs the docker daemon running?"))
	for name, resolve := range map[string]func(*adminServer){
		SQLServerEnv: (*adminServer).resolveSQLServer,
		OracleEnv:    (*adminServer).resolveOracle,
	} {
		var s adminServer
		resolve(&s)
		if s.dsn != "" || s.broken {
			t.Fatalf("%s: dsn %q broken %v", name, s.dsn, s.broken)
		}
		for _, want := range []string{name + " unset", "no Docker engine"} {
			if !strings.Contains(s.reason, want) {
				t.Errorf("%s: reason %q does not say %q", name, s.reason, want)
			}
		}
		if strings.ContainsAny(s.reason, "\r\n") {
			t.Errorf("%s: reason is not one line: %q", name, s.reason)
		}
		t.Log(s.reason)
	}
}

func TestConfiguredSQLServerAndOracleThatDoNotAnswer(t *testing.T) {
	fakeEnv(t, map[string]string{
		"CI":         "true", // the variables win over CI
		SQLServerEnv: "sqlserver://sa:x@127.0.0.1:1?dial+timeout=1",
		OracleEnv:    "oracle://system:x@127.0.0.1:1/FREEPDB1?CONNECTION TIMEOUT=1",
	}, nil)
	for name, resolve := range map[string]func(*adminServer){
		SQLServerEnv: (*adminServer).resolveSQLServer,
		OracleEnv:    (*adminServer).resolveOracle,
	} {
		var s adminServer
		resolve(&s)
		if s.dsn != "" || !s.broken || !strings.Contains(s.reason, name+" is set") {
			t.Errorf("%s: dsn %q broken %v reason %q", name, s.dsn, s.broken, s.reason)
		}
	}
}

func TestOracleNeedsAURL(t *testing.T) {
	fakeEnv(t, map[string]string{OracleEnv: "system/x@//host:1521/FREEPDB1"}, nil)
	var s adminServer
	s.resolveOracle()
	if !s.broken || !strings.Contains(s.reason, "oracle:// URL") {
		t.Fatalf("broken %v reason %q", s.broken, s.reason)
	}
}

func TestWithSQLServerDatabase(t *testing.T) {
	for in, want := range map[string]string{
		"sqlserver://sa:p%40ss@localhost:1433?encrypt=disable": "sqlserver://sa:p%40ss@localhost:1433?database=t_1&encrypt=disable",
		"sqlserver://sa:pw@host?database=master":               "sqlserver://sa:pw@host?database=t_1",
		"server=host;user id=sa;password=pw;":                  "server=host;user id=sa;password=pw;database=t_1",
	} {
		got, err := withSQLServerDatabase(in, "t_1")
		if err != nil || got != want {
			t.Errorf("withSQLServerDatabase(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
}

func TestWithOracleUser(t *testing.T) {
	got, err := withOracleUser("oracle://system:secret@db:1521/FREEPDB1?TRACE FILE=x", "T_AB", "Pcd")
	if err != nil || got != "oracle://T_AB:Pcd@db:1521/FREEPDB1?TRACE FILE=x" {
		t.Errorf("withOracleUser = %q, %v", got, err)
	}
	if _, err := withOracleUser("system/x@db", "u", "p"); err == nil {
		t.Error("a non-URL DSN was accepted")
	}
}

func TestOneLine(t *testing.T) {
	if got := oneLine(errors.New("first\nsecond")); got != "first" {
		t.Errorf("oneLine = %q", got)
	}
	if got := oneLine(nil); got != "no error" {
		t.Errorf("oneLine(nil) = %q", got)
	}
}
