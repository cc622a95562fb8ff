package service

import (
	"encoding/base64"
	"errors"

	"partnerapi.dev/pkg/config"
)

// Paging is CURSOR_KEY, the key that seals the page cursors of a service
// whose lists page; its serve configuration embeds it.
type Paging struct {
	CursorKey config.Secret `env:"CURSOR_KEY, required"`
}

// Validate checks that CURSOR_KEY decodes.
func (c *Paging) Validate() error {
	_, err := c.CursorKeyBytes()
	return err
}

// CursorKeyBytes decodes CURSOR_KEY (base64, padded or URL-safe unpadded, at
// least 32 bytes).
func (c *Paging) CursorKeyBytes() ([]byte, error) {
	k, err := base64.StdEncoding.DecodeString(c.CursorKey.Reveal())
	if err != nil {
		if k, err = base64.RawURLEncoding.DecodeString(c.CursorKey.Reveal()); err != nil {
			return nil, errors.New("CURSOR_KEY must be base64")
		}
	}
	if len(k) < 32 {
		return nil, errors.New("CURSOR_KEY must decode to at least 32 bytes")
	}
	return k, nil
}

// Ingest is INGEST_TOKEN, the bearer token of a service's ingestion
// endpoints; its serve configuration embeds it.
type Ingest struct {
	IngestToken config.Secret `env:"INGEST_TOKEN, required"`
}

// Validate checks the token's length.
func (c *Ingest) Validate() error {
	if len(c.IngestToken.Reveal()) < 16 {
		return errors.New("INGEST_TOKEN must be at least 16 characters")
	}
	return nil
}

// Validate runs each part's rules in order and answers the first failure:
// a serve configuration's Validate lists its embedded parts and its own.
func Validate(parts ...config.Validator) error {
	for _, p := range parts {
		if err := p.Validate(); err != nil {
			return err
		}
	}
	return nil
}
