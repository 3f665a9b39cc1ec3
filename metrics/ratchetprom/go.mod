module github.com/ratchet-go/ratchet/metrics/ratchetprom

go 1.26.0

require (
	github.com/google/uuid v1.6.0
	github.com/jonboulle/clockwork v0.5.0
	github.com/prometheus/client_golang v1.25.0
	github.com/ratchet-go/ratchet/engine v0.1.0
	github.com/ratchet-go/ratchet/sdk v0.1.0
	github.com/ratchet-go/ratchet/stores/memory v0.1.0
	github.com/stretchr/testify v1.12.1
)

require (
	github.com/beorn7/perks v1.0.1 // indirect
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	github.com/munnerz/goautoneg v0.0.0-20191010083416-a7dc8b61c822 // indirect
	github.com/prometheus/client_model v0.6.3 // indirect
	github.com/prometheus/common v0.72.0 // indirect
	github.com/prometheus/procfs v0.22.0 // indirect
	github.com/ratchet-go/ratchet/internal/stored v0.1.0 // indirect
	github.com/robfig/cron/v3 v3.0.1 // indirect
	go.yaml.in/yaml/v3 v3.0.5 // indirect
	golang.org/x/sys v0.50.0 // indirect
	google.golang.org/protobuf v1.36.12 // indirect
)

replace (
	github.com/ratchet-go/ratchet/ddl => ../../ddl
	github.com/ratchet-go/ratchet/engine => ../../engine
	github.com/ratchet-go/ratchet/sdk => ../../sdk
	github.com/ratchet-go/ratchet/stores/internal/sqlcore => ../../stores/internal/sqlcore
	github.com/ratchet-go/ratchet/stores/memory => ../../stores/memory
	github.com/ratchet-go/ratchet/stores/sqlite => ../../stores/sqlite
	github.com/ratchet-go/ratchet/tck => ../../tck
)

replace github.com/ratchet-go/ratchet/internal/stored => ../../internal/stored
