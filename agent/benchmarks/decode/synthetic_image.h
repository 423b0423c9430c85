// agent/benchmarks/decode/synthetic_image.h — the pictures the "decode"
// benchmark makes for itself, and the resize a data loader applies to them.
//
// Pure functions over 8-bit interleaved RGB buffers, no JPEG library and no
// clock, so that what is decoded and what is resized is tested on its own.
//
// Why synthetic photos and not flat test patterns: JPEG decode time follows
// the entropy-coded size (Huffman decoding is the sequential part), so a
// flat or purely smooth picture decodes several times faster than a photo.
// The generator layers what photos have: smooth lighting gradients, objects
// with hard edges, fine periodic texture, and per-pixel sensor noise; at
// quality 90 that compresses to about 2-4 bits per pixel, where camera
// JPEGs of the same size lie (the benchmark reports bits_per_pixel so the
// claim can be checked on every run).
#ifndef FLEETBENCH_AGENT_BENCHMARKS_DECODE_SYNTHETIC_IMAGE_H_
#define FLEETBENCH_AGENT_BENCHMARKS_DECODE_SYNTHETIC_IMAGE_H_

#include <cstdint>
#include <vector>

namespace fleetbench::agent {

// width×height RGB, 3 bytes per pixel, rows top to bottom, no padding.
struct RgbImage {
  int width = 0;
  int height = 0;
  std::vector<uint8_t> pixels;  // size width * height * 3
};

// A deterministic photo-like picture (the same seed gives the same bytes).
// width and height must be >= 1.
RgbImage SyntheticPhoto(int width, int height, uint64_t seed);

// Area (box-filter) resampling to out_width×out_height: each output pixel is
// the mean of the source area it covers, partial source pixels weighted by
// the fraction covered — what OpenCV's INTER_AREA and PIL's BOX filter do
// for shrinking. Enlarging degenerates to nearest-neighbour blocks. Aspect
// ratio is not kept (the data loader's fixed network input). `scratch` is
// reused between calls so the timed loop allocates nothing; `out` must hold
// out_width * out_height * 3 bytes.
void AreaResize(const uint8_t* in, int in_width, int in_height, uint8_t* out,
                int out_width, int out_height, std::vector<float>* scratch);

// Peak signal-to-noise ratio of two equal-sized RGB buffers, in dB; +inf
// when they are identical. Used to check that a decode really produced the
// picture that was encoded.
double PsnrDb(const uint8_t* a, const uint8_t* b, int64_t bytes);

}  // namespace fleetbench::agent

#endif  // FLEETBENCH_AGENT_BENCHMARKS_DECODE_SYNTHETIC_IMAGE_H_
