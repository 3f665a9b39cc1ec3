module github.com/ratchet-go/ratchet/sdk

go 1.26.0

require (
	github.com/google/uuid v1.6.0
	github.com/robfig/cron/v3 v3.0.1
	github.com/stretchr/testify v1.12.1
)

require go.yaml.in/yaml/v3 v3.0.5 // indirect

require github.com/ratchet-go/ratchet/internal/stored v0.1.0

replace github.com/ratchet-go/ratchet/internal/stored => ../internal/stored
