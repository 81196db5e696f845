// Command testproxy is the test environment's forward proxy: an HTTP CONNECT proxy
// (github.com/elazarl/goproxy) or, with -socks5, a SOCKS5 proxy (github.com/armon/go-socks5),
// listening on a loopback port. It prints "listening ADDR" once on stdout and appends one line
// per tunnel it opens ("CONNECT host:port -> ip:port") to the -log file, so a test can see
// that a client went through it. -map NAME=IP makes the proxy, and only the proxy, resolve
// NAME to IP (a name the client itself cannot resolve proves the client did not go around
// the proxy). It must only listen on loopback addresses and only dial loopback addresses.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"

	socks5 "github.com/armon/go-socks5"
	"github.com/elazarl/goproxy"
)

// Set at build time (-X main.version=...).
var version = "dev"

// names maps -map NAME=IP.
type names map[string]string

func (n names) String() string { return fmt.Sprint(map[string]string(n)) }

func (n names) Set(value string) error {
	name, ip, ok := strings.Cut(value, "=")
	if !ok || name == "" || net.ParseIP(ip) == nil {
		return fmt.Errorf("want NAME=IP, got %q", value)
	}
	n[strings.ToLower(name)] = ip
	return nil
}

// tunnels appends one line per tunnel to the log file.
type tunnels struct {
	mu   sync.Mutex
	file *os.File
}

func (t *tunnels) note(format string, args ...any) {
	t.mu.Lock()
	defer t.mu.Unlock()
	fmt.Fprintf(t.file, format+"\n", args...)
	t.file.Sync()
}

// resolve turns host:port into the loopback ip:port the proxy dials, or an error.
func resolve(mapped names, hostport string) (string, error) {
	host, port, err := net.SplitHostPort(hostport)
	if err != nil {
		return "", err
	}
	if ip, ok := mapped[strings.ToLower(host)]; ok {
		host = ip
	}
	if host == "localhost" {
		host = "127.0.0.1"
	}
	ip := net.ParseIP(host)
	if ip == nil || !ip.IsLoopback() {
		return "", fmt.Errorf("%s is not a loopback address", host)
	}
	return net.JoinHostPort(ip.String(), port), nil
}

func main() {
	listen := flag.String("listen", "127.0.0.1:0", "loopback address to listen on")
	logPath := flag.String("log", "", "file to append one line per tunnel to (required)")
	useSocks := flag.Bool("socks5", false, "serve SOCKS5 instead of HTTP CONNECT")
	showVersion := flag.Bool("version", false, "print the version and exit")
	mapped := names{}
	flag.Var(mapped, "map", "NAME=IP: resolve NAME to IP (repeatable)")
	flag.Parse()
	if *showVersion {
		fmt.Printf("testproxy version %s\n", version)
		return
	}
	if *logPath == "" {
		log.Fatal("-log FILE is required")
	}
	host, _, err := net.SplitHostPort(*listen)
	if ip := net.ParseIP(host); err != nil || ip == nil || !ip.IsLoopback() {
		log.Fatalf("-listen must be a loopback address, got %q", *listen)
	}
	file, err := os.OpenFile(*logPath, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		log.Fatal(err)
	}
	seen := &tunnels{file: file}
	listener, err := net.Listen("tcp", *listen)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("listening %s\n", listener.Addr())
	os.Stdout.Sync()
	if *useSocks {
		serveSocks(listener, mapped, seen)
	} else {
		serveConnect(listener, mapped, seen)
	}
}

func serveConnect(listener net.Listener, mapped names, seen *tunnels) {
	proxy := goproxy.NewProxyHttpServer()
	proxy.OnRequest().HandleConnectFunc(func(hostport string, ctx *goproxy.ProxyCtx) (*goproxy.ConnectAction, string) {
		target, err := resolve(mapped, hostport)
		if err != nil {
			seen.note("REJECT %s: %v", hostport, err)
			return goproxy.RejectConnect, hostport
		}
		seen.note("CONNECT %s -> %s", hostport, target)
		return goproxy.OkConnect, target
	})
	// Plain (non-CONNECT) requests are not what the tests send: refuse them.
	proxy.NonproxyHandler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "testproxy only tunnels", http.StatusBadRequest)
	})
	log.Fatal(http.Serve(listener, proxy))
}

// loopbackOnly resolves through -map and refuses every destination that is not loopback.
type loopbackOnly struct {
	mapped names
	seen   *tunnels
}

func (l loopbackOnly) Resolve(ctx context.Context, name string) (context.Context, net.IP, error) {
	if ip, ok := l.mapped[strings.ToLower(name)]; ok {
		return ctx, net.ParseIP(ip), nil
	}
	if strings.EqualFold(name, "localhost") {
		return ctx, net.IPv4(127, 0, 0, 1), nil
	}
	return ctx, nil, fmt.Errorf("%s is not mapped", name)
}

func (l loopbackOnly) Allow(ctx context.Context, req *socks5.Request) (context.Context, bool) {
	dest := req.DestAddr
	asked := dest.FQDN
	if asked == "" {
		asked = dest.IP.String()
	}
	asked = net.JoinHostPort(asked, fmt.Sprint(dest.Port))
	if req.Command != socks5.ConnectCommand || !dest.IP.IsLoopback() {
		l.seen.note("REJECT %s", asked)
		return ctx, false
	}
	l.seen.note("CONNECT %s -> %s", asked, net.JoinHostPort(dest.IP.String(), fmt.Sprint(dest.Port)))
	return ctx, true
}

func serveSocks(listener net.Listener, mapped names, seen *tunnels) {
	rules := loopbackOnly{mapped: mapped, seen: seen}
	server, err := socks5.New(&socks5.Config{
		Resolver: rules,
		Rules:    rules,
		Logger:   log.New(os.Stderr, "", log.LstdFlags),
	})
	if err != nil {
		log.Fatal(err)
	}
	log.Fatal(server.Serve(listener))
}
