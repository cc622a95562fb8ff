package delivery

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"syscall"
)

// Why an attempt got no answer, as partners read it in a delivery's
// lastError: fixed categories, never the transport's own message, which
// names addresses, ports and resolver results (an oracle for probing the
// network the service runs in).
const (
	ErrTextTimeout    = "timeout: the endpoint did not answer within 15 seconds."
	ErrTextRefused    = "connection refused: nothing accepts connections at the endpoint's address."
	ErrTextReset      = "connection closed: the endpoint closed the connection before answering."
	ErrTextDNS        = "name not resolved: the endpoint's host name has no address."
	ErrTextTLS        = "TLS error: the endpoint's certificate or TLS handshake was not accepted."
	ErrTextNotAllowed = "address not allowed: the endpoint resolves to a private, loopback, link-local or reserved address."
	ErrTextOther      = "unreachable: the endpoint could not be reached."
)

// transportError is the category of an attempt's transport error.
func transportError(err error) string {
	var dnsErr *net.DNSError
	var netErr net.Error
	var certErr *tls.CertificateVerificationError
	var alert tls.AlertError
	var recordErr tls.RecordHeaderError
	var unknownCA x509.UnknownAuthorityError
	var hostErr x509.HostnameError
	var invalidCert x509.CertificateInvalidError
	switch {
	case errors.Is(err, ErrBlockedAddress):
		return ErrTextNotAllowed
	case errors.As(err, &dnsErr):
		return ErrTextDNS
	case errors.As(err, &certErr), errors.As(err, &alert), errors.As(err, &recordErr), errors.As(err, &unknownCA),
		errors.As(err, &hostErr), errors.As(err, &invalidCert):
		return ErrTextTLS
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &netErr) && netErr.Timeout():
		return ErrTextTimeout
	case errors.Is(err, syscall.ECONNREFUSED):
		return ErrTextRefused
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, syscall.EPIPE):
		return ErrTextReset
	}
	return ErrTextOther
}
