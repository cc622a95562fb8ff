package httpx

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/gofiber/fiber/v2"
	"github.com/valyala/fasthttp"
)

// DefaultHeaderLimit bounds a request's line and headers: room for every
// filter of the longest legal search, percent-encoded.
const DefaultHeaderLimit = 32 << 10

// errUnknownMethod marks a request whose method no route can have.
var errUnknownMethod = errors.New("unknown method")

// guardServer makes the HTTP server's own answers the envelope: requests that
// are not HTTP/1.1 (framing errors), headers over the limit, bodies over the
// limit, and methods that no route knows. Fiber answers those itself, in
// plain text or with the parser's error, which quotes the request bytes
// (credentials included), so the messages here are fixed.
func guardServer(app *fiber.App, opts Options) {
	srv := app.Server()
	srv.ErrorHandler = func(fctx *fasthttp.RequestCtx, err error) {
		c := app.AcquireCtx(fctx)
		defer app.ReleaseCtx(c)
		_ = writeErrorWithID(c, serverError(app, fctx, err, opts), opts.BodyLimit)
	}
	next := srv.Handler
	srv.Handler = func(fctx *fasthttp.RequestCtx) {
		if !knownMethod(fctx.Method()) {
			// Read at call time: a process may wrap the error handler after New.
			srv.ErrorHandler(fctx, errUnknownMethod)
			return
		}
		next(fctx)
	}
}

func serverError(app *fiber.App, fctx *fasthttp.RequestCtx, err error, opts Options) *Error {
	var small *fasthttp.ErrSmallBuffer
	var netErr net.Error
	switch {
	case errors.Is(err, errUnknownMethod):
		if allow := allowedMethods(app, string(fctx.URI().PathOriginal())); allow != "" {
			return MethodNotAllowed(allow)
		}
		return NotFound()
	case errors.As(err, &small):
		return &Error{Status: http.StatusRequestHeaderFieldsTooLarge, Code: CodeInvalidRequest,
			Message: fmt.Sprintf("The request line and headers exceed %d bytes.", opts.HeaderLimit)}
	case errors.Is(err, fasthttp.ErrBodyTooLarge):
		return PayloadTooLarge(opts.BodyLimit)
	case errors.As(err, &netErr) && netErr.Timeout():
		return &Error{Status: http.StatusRequestTimeout, Code: CodeInvalidRequest, Message: "The request did not arrive in time."}
	}
	return BadRequest("The request is not valid HTTP/1.1.")
}

func knownMethod(m []byte) bool {
	switch string(m) {
	case fiber.MethodGet, fiber.MethodHead, fiber.MethodPost, fiber.MethodPut, fiber.MethodPatch,
		fiber.MethodDelete, fiber.MethodOptions, fiber.MethodConnect, fiber.MethodTrace:
		return true
	}
	return false
}

// checkRequestText runs ahead of every route: a path that HTTP stacks resolve
// differently (dot segments, empty segments, encoded slashes, backslashes or
// dots) is unknown, and a path segment or query parameter that is not UTF-8
// text without NUL is a 400 naming it, before any handler can pass it on (to
// Postgres, which refuses such text with an error).
func checkRequestText(app *fiber.App) fiber.Handler {
	return func(c *fiber.Ctx) error {
		path := c.Path()
		if AmbiguousPath(path) {
			return NotFound()
		}
		segments := strings.Split(path, "/")
		for i, seg := range segments {
			if isPlainASCII(seg) {
				continue
			}
			if v, err := url.PathUnescape(seg); err != nil || !validText(v) {
				return BadRequest("%s is not valid text: send UTF-8, percent-encoded, without NUL characters.", pathPartName(app, path, i))
			}
		}
		var bad *Error
		c.Context().QueryArgs().VisitAll(func(k, v []byte) {
			switch {
			case bad != nil:
			case !validText(string(k)):
				bad = BadRequest("A query parameter name is not valid text: send UTF-8, percent-encoded, without NUL characters.")
			case !validText(string(v)):
				bad = BadRequest("%s is not valid text: send UTF-8, percent-encoded, without NUL characters.", queryParamName(k))
			}
		})
		if bad != nil {
			return bad
		}
		return c.Next()
	}
}

// AmbiguousPath reports a raw path that different HTTP stacks could resolve
// to different resources: dot or empty segments, encoded slashes,
// backslashes or dots, and backslashes.
func AmbiguousPath(p string) bool {
	if p == "/" {
		return false
	}
	for i, seg := range strings.Split(p, "/") {
		if i > 0 && seg == "" || seg == "." || seg == ".." {
			return true
		}
	}
	lp := strings.ToLower(p)
	return strings.Contains(lp, "%2f") || strings.Contains(lp, "%5c") || strings.Contains(lp, "%2e") || strings.Contains(p, "\\")
}

func isPlainASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if b := s[i]; b == 0 || b == '%' || b >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

func validText(s string) bool { return utf8.ValidString(s) && !strings.ContainsRune(s, 0) }

// safeName is the shape of the API's query parameter names: only such a name
// is quoted back, never arbitrary request bytes.
var safeName = regexp.MustCompile(`^[a-z][a-z0-9_]{0,31}$`)

func queryParamName(k []byte) string {
	if safeName.Match(k) {
		return "Query parameter " + string(k)
	}
	return "A query parameter"
}

// pathPartName names path segment i by the route parameter it fills, when a
// route template matches the path.
func pathPartName(app *fiber.App, path string, i int) string {
	for _, r := range app.GetRoutes(true) {
		if r.Method == "USE" || !MatchPath(r.Path, path) {
			continue
		}
		ts := strings.Split(r.Path, "/")
		if i < len(ts) && strings.HasPrefix(ts[i], ":") {
			return "Path parameter " + strings.TrimSuffix(strings.TrimPrefix(ts[i], ":"), "?")
		}
	}
	return "The request path"
}
