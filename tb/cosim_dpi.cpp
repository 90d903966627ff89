// DPI-C helpers of cosim_harness.sv: batches of payloads move between files and
// the simulation as raw memory, with no per-character parsing ($readmemh reads
// ~15 MB/s of wide hex here, $fread ~80 MB/s; this is a memcpy per beat).
//
// File format (both directions): one beat after another, each beat
// ceil(width / 32) little-endian 32-bit words, least significant word first
// (the svBitVecVal layout of a DPI bit vector); unused high bits are zero.
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>

#include "svdpi.h"

namespace {
std::vector<uint32_t> in_buf, out_buf;
int in_words = 0, out_words = 0;
long in_beats = 0, out_beats = 0;
}  // namespace

extern "C" {

// Read `beats` payloads of `words` 32-bit words each; returns the number of beats read.
int cosim_load(const char* path, int beats, int words) {
    in_words = words;
    in_beats = 0;
    in_buf.assign(static_cast<size_t>(beats) * words, 0u);
    FILE* f = std::fopen(path, "rb");
    if (!f) return -1;
    const size_t got = std::fread(in_buf.data(), sizeof(uint32_t), in_buf.size(), f);
    std::fclose(f);
    in_beats = static_cast<long>(got / (words ? words : 1));
    return static_cast<int>(in_beats);
}

// Payload `idx` of the loaded batch (zeros past its end).
void cosim_get(int idx, svBitVecVal* payload) {
    if (idx >= 0 && idx < in_beats) {
        std::memcpy(payload, &in_buf[static_cast<size_t>(idx) * in_words], sizeof(uint32_t) * in_words);
    } else {
        std::memset(payload, 0, sizeof(uint32_t) * in_words);
    }
}

// Start collecting up to `beats` outputs of `words` words each.
void cosim_begin_out(int beats, int words) {
    out_words = words;
    out_beats = beats;
    out_buf.assign(static_cast<size_t>(beats) * words, 0u);
}

// Store output `idx` (ignored past the announced count).
void cosim_put(int idx, const svBitVecVal* payload) {
    if (idx >= 0 && idx < out_beats) {
        std::memcpy(&out_buf[static_cast<size_t>(idx) * out_words], payload, sizeof(uint32_t) * out_words);
    }
}

// Write the first `beats` outputs; returns 0 on success.
int cosim_save(const char* path, int beats) {
    if (beats < 0 || beats > out_beats) return -2;
    FILE* f = std::fopen(path, "wb");
    if (!f) return -1;
    const size_t n = static_cast<size_t>(beats) * out_words;
    const size_t put = std::fwrite(out_buf.data(), sizeof(uint32_t), n, f);
    std::fclose(f);
    return put == n ? 0 : -3;
}

}  // extern "C"
