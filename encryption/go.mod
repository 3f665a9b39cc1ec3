module github.com/ratchet-go/ratchet/encryption

go 1.26.0

require (
	github.com/google/uuid v1.6.0
	github.com/ratchet-go/ratchet/internal/stored v0.1.0
	github.com/ratchet-go/ratchet/sdk v0.1.0
	github.com/stretchr/testify v1.12.1
	golang.org/x/crypto v0.58.0
)

require (
	github.com/robfig/cron/v3 v3.0.1 // indirect
	go.yaml.in/yaml/v3 v3.0.5 // indirect
	golang.org/x/sys v0.49.0 // indirect
)

replace github.com/ratchet-go/ratchet/sdk => ../sdk

replace github.com/ratchet-go/ratchet/internal/stored => ../internal/stored
