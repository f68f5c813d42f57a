// Load client for sheetd's decision streams (Server-Sent Events), one process, epoll.
//
//   sseclient PORT TOKEN STREAMS EVENTS HOLD_SECONDS CYCLES
//
// 1. Opens STREAMS streams, one per user (bench-s<i>), and waits for each first `event: decision`.
//    Prints "open <streams> <seconds>".
// 2. Holds them HOLD_SECONDS (the caller measures the server's idle CPU and RSS meanwhile), counting
//    heartbeat comments. Prints "held <seconds> <heartbeats>".
// 3. EVENTS times, 5 ms apart: a count PUT for a random user over one keep-alive connection; the time
//    from just before the PUT is written to the arrival of that user's next `event: decision`.
//    Prints "latency_ms p50 p90 p99 max lost".
// 4. Closes every stream, then CYCLES times opens a stream, reads its first event and closes it.
//    Prints "cycles <n> <seconds>".
// Lines starting with "phase " tell the caller where it is (it samples the server between phases).
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

typedef struct {
    int fd;
    int events;      // `event: decision` seen
    int heartbeats;
    char tail[16];   // the last bytes, so a marker split across reads is still found
} stream_t;

static int port;
static const char *token;

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int connect_to(int nonblocking) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0) { perror("socket"); exit(1); }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(fd, (struct sockaddr *)&a, sizeof a) != 0) { perror("connect"); exit(1); }
    if (nonblocking) fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
    return fd;
}

static void send_all(int fd, const char *s, size_t n) {
    while (n > 0) {
        ssize_t w = send(fd, s, n, MSG_NOSIGNAL);
        if (w < 0 && (errno == EAGAIN || errno == EINTR)) continue;
        if (w <= 0) { perror("send"); exit(1); }
        s += w; n -= (size_t)w;
    }
}

static void open_stream(stream_t *s, int user) {
    s->fd = connect_to(1);
    s->events = s->heartbeats = 0;
    memset(s->tail, 0, sizeof s->tail);
    char req[1024];
    int n = snprintf(req, sizeof req,
                     "GET /v1/users/bench-s%d/decision/stream?screen=home&tab=accounts&platform=ios HTTP/1.1\r\n"
                     "Host: 127.0.0.1\r\nAuthorization: Bearer %s\r\n\r\n", user, token);
    send_all(s->fd, req, (size_t)n);
}

// Counts markers that end in the newly read bytes (the previous tail is prepended, so a marker split
// across two reads counts once, and one that ended in the tail is not counted again).
static int count_marker(const char *tail, const char *buf, ssize_t n, const char *marker) {
    size_t m = strlen(marker), tl = strlen(tail);
    static char joined[65536 + 32];
    memcpy(joined, tail, tl);
    memcpy(joined + tl, buf, (size_t)n);
    joined[tl + (size_t)n] = 0;
    int c = 0;
    for (char *p = joined; (p = strstr(p, marker)); p += 1) {
        if ((size_t)(p - joined) + m > tl) c++;
    }
    return c;
}

// The last 14 bytes of tail + buf (shorter than either marker's 15, so no whole marker fits).
static void keep_tail(char *tail, const char *buf, ssize_t n) {
    char joined[64];
    size_t tl = strlen(tail), keep = n < 14 ? (size_t)n : 14;
    memcpy(joined, tail, tl);
    memcpy(joined + tl, buf + n - (ssize_t)keep, keep);
    size_t total = tl + keep, start = total > 14 ? total - 14 : 0;
    memmove(tail, joined + start, total - start);
    tail[total - start] = 0;
}

// Reads what is there; returns -1 when the server closed the stream.
static int drain(stream_t *s) {
    char buf[65536];
    for (;;) {
        ssize_t n = recv(s->fd, buf, sizeof buf, 0);
        if (n > 0) {
            s->events += count_marker(s->tail, buf, n, "event: decision");
            s->heartbeats += count_marker(s->tail, buf, n, ": heartbeat");
            keep_tail(s->tail, buf, n);
            continue;
        }
        if (n == 0) return -1;
        if (errno == EAGAIN || errno == EWOULDBLOCK) return 0;
        if (errno == EINTR) continue;
        return -1;
    }
}

static int cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv) {
    if (argc != 7) { fprintf(stderr, "usage: sseclient PORT TOKEN STREAMS EVENTS HOLD_SECONDS CYCLES\n"); return 2; }
    port = atoi(argv[1]);
    token = argv[2];
    int streams = atoi(argv[3]), events = atoi(argv[4]), hold = atoi(argv[5]), cycles = atoi(argv[6]);
    struct rlimit rl;
    getrlimit(RLIMIT_NOFILE, &rl);
    rl.rlim_cur = rl.rlim_max;
    setrlimit(RLIMIT_NOFILE, &rl);
    setvbuf(stdout, NULL, _IOLBF, 0);

    stream_t *s = calloc((size_t)streams, sizeof *s);
    int ep = epoll_create1(0);
    double t0 = now_ms();
    for (int i = 0; i < streams; i++) {
        open_stream(&s[i], i);
        struct epoll_event ev = {.events = EPOLLIN, .data.u32 = (uint32_t)i};
        epoll_ctl(ep, EPOLL_CTL_ADD, s[i].fd, &ev);
    }
    int ready = 0;
    struct epoll_event evs[256];
    while (ready < streams) {
        int n = epoll_wait(ep, evs, 256, 10000);
        if (n <= 0) { fprintf(stderr, "timeout: %d of %d streams opened\n", ready, streams); return 1; }
        for (int k = 0; k < n; k++) {
            stream_t *x = &s[evs[k].data.u32];
            int before = x->events;
            if (drain(x) < 0) { fprintf(stderr, "stream %u closed while opening\n", evs[k].data.u32); return 1; }
            if (before == 0 && x->events > 0) ready++;
        }
    }
    printf("open %d %.3f\n", streams, (now_ms() - t0) / 1e3);
    printf("phase held\n");

    double hold_end = now_ms() + hold * 1e3;
    while (now_ms() < hold_end) {
        int n = epoll_wait(ep, evs, 256, 200);
        for (int k = 0; k < n; k++) drain(&s[evs[k].data.u32]);
    }
    long beats = 0;
    for (int i = 0; i < streams; i++) beats += s[i].heartbeats;
    printf("held %d %ld\n", hold, beats);
    printf("phase events\n");

    int put = connect_to(0);
    struct timeval tv = {.tv_sec = 5};
    setsockopt(put, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    double *lat = calloc((size_t)(events > 0 ? events : 1), sizeof *lat);
    int measured = 0, lost = 0;
    srand(42);
    for (int e = 0; e < events; e++) {
        int user = rand() % streams;
        stream_t *x = &s[user];
        int before = x->events;
        char body[64], req[1024];
        int bl = snprintf(body, sizeof body, "{\"count\": %d}", 1 + (x->events % 2));  // alternates 2, 1, 2: each changes the decision
        int n = snprintf(req, sizeof req,
                         "PUT /v1/users/bench-s%d/containers/offers-home/count HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                         "Authorization: Bearer %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s",
                         user, token, bl, body);
        double start = now_ms();
        send_all(put, req, (size_t)n);
        double deadline = start + 2000;
        int got = 0, answered = 0;
        char rbuf[4096];
        while (!(got && answered) && now_ms() < deadline) {
            if (!answered) {
                ssize_t r = recv(put, rbuf, sizeof rbuf, MSG_DONTWAIT);
                if (r > 0) answered = 1;  // small answers arrive in one read on loopback
            }
            int m = epoll_wait(ep, evs, 256, got ? 1 : 1);
            for (int k = 0; k < m; k++) {
                stream_t *y = &s[evs[k].data.u32];
                drain(y);
                if (y == x && x->events > before && !got) {
                    got = 1;
                    lat[measured++] = now_ms() - start;
                }
            }
        }
        if (!got) lost++;
        double next = start + 5;
        while (now_ms() < next) {
            int m = epoll_wait(ep, evs, 256, 1);
            for (int k = 0; k < m; k++) drain(&s[evs[k].data.u32]);
        }
    }
    qsort(lat, (size_t)measured, sizeof *lat, cmp);
    if (measured > 0) {
        printf("latency_ms %.3f %.3f %.3f %.3f %d\n", lat[measured / 2], lat[measured * 9 / 10],
               lat[(int)(measured * 0.99)], lat[measured - 1], lost);
    } else {
        printf("latency_ms nan nan nan nan %d\n", lost);
    }
    close(put);
    for (int i = 0; i < streams; i++) close(s[i].fd);
    printf("phase closed\n");
    sleep(1);

    t0 = now_ms();
    for (int c = 0; c < cycles; c++) {
        stream_t one;
        open_stream(&one, c % (streams > 0 ? streams : 1));
        fcntl(one.fd, F_SETFL, fcntl(one.fd, F_GETFL) & ~O_NONBLOCK);
        struct timeval t5 = {.tv_sec = 5};
        setsockopt(one.fd, SOL_SOCKET, SO_RCVTIMEO, &t5, sizeof t5);
        char buf[8192];
        while (one.events == 0) {
            ssize_t n = recv(one.fd, buf, sizeof buf, 0);
            if (n <= 0) { fprintf(stderr, "cycle %d: no first event\n", c); return 1; }
            one.events += count_marker(one.tail, buf, n, "event: decision");
            keep_tail(one.tail, buf, n);
        }
        close(one.fd);
    }
    printf("cycles %d %.3f\n", cycles, (now_ms() - t0) / 1e3);
    printf("phase done\n");
    return 0;
}
