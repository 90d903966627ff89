// Verilator main of the simulated board: the Verilog module `board` (ports clk, rst, uart_rx,
// uart_tx) clocked forever, its serial pins bridged to one TCP client at a time.
//
// Bytes from the client are shifted onto uart_rx by a bit-level UART transmitter (8N1, LSB
// first, idle high, clocks_per_bit cycles a bit); a bit-level UART receiver samples uart_tx in
// the middle of each bit and sends the bytes to the client.  The design only ever sees clock
// cycles, so the real host driver (pyserial socket://127.0.0.1:PORT) talks to it at the board's
// real clock-to-baud ratio, however fast the simulation runs.
//
// Options: --port N (0: any free port), --clocks-per-bit N, --trace FILE (a build with
// waveforms), --max-cycles N, --once (exit when the client disconnects), --idle-sleep-after N,
// --exit-with-parent.
// Prints `listening on 127.0.0.1:PORT` on stdout once listening; statistics on stderr at exit.

#include "Vboard.h"
#include "verilated.h"
#if VM_TRACE_FST
#include "verilated_fst_c.h"
typedef VerilatedFstC TraceFile;
#elif VM_TRACE
#include "verilated_vcd_c.h"
typedef VerilatedVcdC TraceFile;
#endif

#include <arpa/inet.h>
#include <cerrno>
#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <memory>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <string>
#include <sys/socket.h>
#include <unistd.h>
#include <fcntl.h>

namespace {

volatile std::sig_atomic_t g_stop = 0;
void on_signal(int) { g_stop = 1; }

const int RESET_CYCLES = 8;
const size_t MAX_QUEUED = 1 << 16;   // bytes read ahead from the client (TCP holds back the rest)
const int MAX_ERROR_LINES = 10;      // framing errors reported one by one, then only counted

struct Options {
    int port = 0;
    uint64_t clocks_per_bit = 0;
    std::string trace;
    uint64_t max_cycles = 0;         // 0: no limit
    bool once = false;
    uint64_t idle_sleep_after = 1000000;   // idle cycles before polling with a 1 ms timeout; 0: never
    bool exit_with_parent = false;   // exit when the process that started it is gone (no stray simulations)
};

[[noreturn]] void usage_error(const std::string& what) {
    std::fprintf(stderr, "board_sim: %s\nusage: board_sim --clocks-per-bit N [--port N] [--trace FILE] "
                 "[--max-cycles N] [--once] [--idle-sleep-after CYCLES] [--exit-with-parent]\n", what.c_str());
    std::exit(2);
}

uint64_t parse_number(const char* opt, const char* text, uint64_t lo, uint64_t hi) {
    char* end = nullptr;
    errno = 0;
    unsigned long long v = std::strtoull(text, &end, 10);
    if (errno || end == text || *end || text[0] == '-' || v < lo || v > hi)
        usage_error(std::string(opt) + " must be an integer in " + std::to_string(lo) + ".." +
                    std::to_string(hi) + ", got '" + text + "'");
    return v;
}

Options parse_options(int argc, char** argv) {
    Options o;
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        auto value = [&]() -> const char* {
            if (i + 1 >= argc) usage_error(a + " needs a value");
            return argv[++i];
        };
        if (a == "--port") o.port = int(parse_number("--port", value(), 0, 65535));
        else if (a == "--clocks-per-bit") o.clocks_per_bit = parse_number("--clocks-per-bit", value(), 4, 1u << 30);
        else if (a == "--trace") o.trace = value();
        else if (a == "--max-cycles") o.max_cycles = parse_number("--max-cycles", value(), 1, UINT64_MAX);
        else if (a == "--once") o.once = true;
        else if (a == "--idle-sleep-after") o.idle_sleep_after = parse_number("--idle-sleep-after", value(), 0, UINT64_MAX);
        else if (a == "--exit-with-parent") o.exit_with_parent = true;
        else if (a.rfind("+verilator", 0) == 0) continue;
        else usage_error("unknown option '" + a + "'");
    }
    if (o.clocks_per_bit == 0) usage_error("--clocks-per-bit is required");
#if !VM_TRACE
    if (!o.trace.empty()) usage_error("--trace needs a build with waveforms (build_board_sim(..., waves=True))");
#endif
    return o;
}

// Host -> board: shifts queued bytes onto the board's uart_rx pin, 8N1, LSB first.
class UartTransmitter {
public:
    explicit UartTransmitter(uint64_t cpb) : cpb_(cpb) {}
    std::deque<uint8_t> queue;

    // The line level for the next cycle.
    uint8_t step() {
        if (bit_ < 0) {
            if (queue.empty()) return 1;
            frame_ = (1u << 9) | (uint32_t(queue.front()) << 1);   // start 0, data LSB first, stop 1
            queue.pop_front();
            ++sent;
            bit_ = 0;
            count_ = 0;
        }
        uint8_t level = (frame_ >> bit_) & 1;
        if (++count_ == cpb_) {
            count_ = 0;
            if (++bit_ == 10) bit_ = -1;
        }
        return level;
    }
    bool busy() const { return bit_ >= 0 || !queue.empty(); }
    uint64_t sent = 0;

private:
    uint64_t cpb_;
    uint32_t frame_ = 0;
    int bit_ = -1;              // index in the frame of the bit on the line; -1: idle
    uint64_t count_ = 0;
};

// Board -> host: samples the board's uart_tx pin in the middle of each bit.
class UartReceiver {
public:
    explicit UartReceiver(uint64_t cpb) : cpb_(cpb) {}
    uint64_t framing_errors = 0, glitches = 0, received = 0;

    // Feeds one cycle's line level; returns a received byte or -1.
    int step(uint8_t level, uint64_t cycle) {
        switch (state_) {
        case IDLE:
            if (!level) { state_ = START; count_ = 0; }
            return -1;
        case BREAK:                                   // stop bit was 0: wait for the line to go high
            if (level) state_ = IDLE;
            return -1;
        case START:
            if (++count_ < cpb_ / 2) return -1;
            if (level) { ++glitches; state_ = IDLE; return -1; }   // start bit shorter than half a bit
            state_ = DATA; count_ = 0; bit_ = 0; byte_ = 0;
            return -1;
        case DATA:
            if (++count_ < cpb_) return -1;
            count_ = 0;
            byte_ |= uint32_t(level) << bit_;
            if (++bit_ == 8) state_ = STOP;
            return -1;
        case STOP:
            if (++count_ < cpb_) return -1;
            if (!level) {
                if (framing_errors++ < MAX_ERROR_LINES)
                    std::fprintf(stderr, "board_sim: framing error at cycle %llu (stop bit 0; byte 0x%02x dropped)%s\n",
                                 (unsigned long long)cycle, byte_,
                                 framing_errors == MAX_ERROR_LINES ? "; further ones only counted" : "");
                state_ = BREAK;
                return -1;
            }
            state_ = IDLE;
            ++received;
            return int(byte_);
        }
        return -1;
    }
    bool busy() const { return state_ != IDLE; }

private:
    enum State { IDLE, START, DATA, STOP, BREAK };
    uint64_t cpb_;
    State state_ = IDLE;
    uint64_t count_ = 0;
    int bit_ = 0;
    uint32_t byte_ = 0;
};

int listen_on(int port) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0) { std::perror("board_sim: socket"); std::exit(1); }
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = htons(uint16_t(port));
    if (bind(fd, (sockaddr*)&addr, sizeof addr) < 0 || listen(fd, 4) < 0) {
        std::fprintf(stderr, "board_sim: cannot listen on 127.0.0.1:%d: %s\n", port, std::strerror(errno));
        std::exit(1);
    }
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
    socklen_t len = sizeof addr;
    getsockname(fd, (sockaddr*)&addr, &len);
    std::printf("listening on 127.0.0.1:%d\n", ntohs(addr.sin_port));
    std::fflush(stdout);
    return fd;
}

// One TCP client at a time; all I/O non-blocking.
class Bridge {
public:
    Bridge(int listen_fd, bool once) : listen_fd_(listen_fd), once_(once) {}
    std::string outbox;           // received from the board, not yet sent
    uint64_t dropped = 0;         // board bytes with no client to take them
    bool finished = false;        // --once and the client left

    // Accepts, reads into `queue` (up to MAX_QUEUED), writes `outbox`.  timeout_ms: poll's.
    void service(std::deque<uint8_t>& queue, int timeout_ms) {
        pollfd p{client_ >= 0 ? client_ : listen_fd_, short(POLLIN | (outbox.empty() ? 0 : POLLOUT)), 0};
        if (client_ >= 0 && queue.size() >= MAX_QUEUED) p.events &= ~POLLIN;
        if (poll(&p, 1, timeout_ms) <= 0) return;
        if (client_ < 0) { accept_client(); return; }
        if (p.revents & (POLLIN | POLLHUP | POLLERR)) read_client(queue);
        if (client_ >= 0 && !outbox.empty()) write_client();
    }
    void deliver(uint8_t byte) {
        if (client_ >= 0) outbox.push_back(char(byte));
        else ++dropped;
    }
    void flush() {                // at exit: best effort, blocking briefly
        if (client_ < 0) return;
        fcntl(client_, F_SETFL, fcntl(client_, F_GETFL) & ~O_NONBLOCK);
        timeval tv{1, 0};
        setsockopt(client_, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
        if (!outbox.empty()) write_client();
        close(client_);
        client_ = -1;
    }
    bool connected() const { return client_ >= 0; }

private:
    void accept_client() {
        int fd = accept(listen_fd_, nullptr, nullptr);
        if (fd < 0) return;
        fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
        int one = 1;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        client_ = fd;
        outbox.clear();
    }
    void read_client(std::deque<uint8_t>& queue) {
        uint8_t buf[4096];
        size_t room = MAX_QUEUED - std::min(queue.size(), MAX_QUEUED);
        ssize_t n = recv(client_, buf, std::min(room, sizeof buf), 0);
        if (n > 0) queue.insert(queue.end(), buf, buf + n);
        else if (n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) disconnect();
    }
    void write_client() {
        ssize_t n = send(client_, outbox.data(), outbox.size(), MSG_NOSIGNAL);
        if (n > 0) outbox.erase(0, size_t(n));
        else if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) disconnect();
    }
    void disconnect() {
        close(client_);
        client_ = -1;
        outbox.clear();
        if (once_) finished = true;
    }
    int listen_fd_;
    bool once_;
    int client_ = -1;
};

}  // namespace

int main(int argc, char** argv) {
    Options opt = parse_options(argc, argv);
    const pid_t parent = getppid();
    std::signal(SIGTERM, on_signal);
    std::signal(SIGINT, on_signal);
    std::signal(SIGPIPE, SIG_IGN);

    auto context = std::make_unique<VerilatedContext>();
    context->commandArgs(argc, argv);
    auto top = std::make_unique<Vboard>(context.get(), "board");
#if VM_TRACE
    std::unique_ptr<TraceFile> trace;
    if (!opt.trace.empty()) {
        context->traceEverOn(true);
        trace = std::make_unique<TraceFile>();
        top->trace(trace.get(), 99);
        trace->open(opt.trace.c_str());
    }
#define DUMP(t) do { if (trace) trace->dump(t); } while (0)
#else
#define DUMP(t) do {} while (0)
#endif

    UartTransmitter host_tx(opt.clocks_per_bit);
    UartReceiver host_rx(opt.clocks_per_bit);
    Bridge bridge(listen_on(opt.port), opt.once);

    // The socket is polled once a byte-time (at least every 1024 cycles: a system call costs as much as
    // some hundred cycles of a small design); bytes are read ahead, so the line still carries the client's
    // bytes back to back.  Idle for idle_sleep_after cycles, it polls once a bit-time with a 1 ms timeout.
    const uint64_t poll_every = std::max<uint64_t>(10 * opt.clocks_per_bit, 1024);
    uint64_t cycle = 0, idle_cycles = 0, next_poll = 0;
    auto t0 = std::chrono::steady_clock::now();
    top->clk = 0;
    top->rst = 1;
    top->uart_rx = 1;
#ifdef BOARD_FAST_CLOCK
    // A two-domain board (fpga.board.top): fast_clk, unrelated to clk, a period of 370 time units to clk's
    // 1000; its edges between clk's are evaluated on their own; fast_rst follows rst.
    constexpr uint64_t SLOW_HALF = 500, FAST_HALF = 185;
    uint64_t next_fast = FAST_HALF;
    top->fast_clk = 0;
    top->fast_rst = 1;
    auto fast_until = [&](uint64_t t) {
        top->fast_rst = top->rst;
        for (; next_fast < t; next_fast += FAST_HALF) {
            top->fast_clk = !top->fast_clk;
            top->eval();
        }
    };
#define FAST_UNTIL(t) fast_until(t)
#else
#define FAST_UNTIL(t) do {} while (0)
#endif
    top->eval();
    for (;;) {
        if (opt.max_cycles && cycle >= opt.max_cycles) break;
        if (cycle >= next_poll) {
            if (g_stop || bridge.finished || (opt.exit_with_parent && getppid() != parent)) break;
            bool sleepy = opt.idle_sleep_after && idle_cycles >= opt.idle_sleep_after;
            bridge.service(host_tx.queue, sleepy ? 1 : 0);
            next_poll = cycle + (sleepy ? opt.clocks_per_bit : poll_every);
        }
        top->rst = cycle < RESET_CYCLES;
        top->uart_rx = cycle < RESET_CYCLES ? 1 : host_tx.step();
        FAST_UNTIL(2 * cycle * SLOW_HALF);
        top->clk = 1;
        top->eval();
        DUMP(2 * cycle + 1);
        FAST_UNTIL((2 * cycle + 1) * SLOW_HALF);
        top->clk = 0;
        top->eval();
        DUMP(2 * cycle + 2);
        int byte = host_rx.step(top->uart_tx, cycle);
        if (byte >= 0) bridge.deliver(uint8_t(byte));
        bool busy = host_tx.busy() || host_rx.busy() || !bridge.outbox.empty() || !top->uart_tx;
        idle_cycles = busy ? 0 : idle_cycles + 1;
        ++cycle;
    }
    bridge.flush();
    top->final();
#if VM_TRACE
    if (trace) trace->close();
#endif
    double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::fprintf(stderr, "board_sim: %llu cycles in %.3f s (%.0f cycles/s); bytes to board %llu, from board %llu, "
                 "dropped %llu, framing errors %llu, glitches %llu\n",
                 (unsigned long long)cycle, seconds, seconds > 0 ? cycle / seconds : 0.0,
                 (unsigned long long)(host_tx.sent), (unsigned long long)host_rx.received,
                 (unsigned long long)bridge.dropped, (unsigned long long)host_rx.framing_errors,
                 (unsigned long long)host_rx.glitches);
    return 0;
}
