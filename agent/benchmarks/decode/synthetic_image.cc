#include "agent/benchmarks/decode/synthetic_image.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace fleetbench::agent {
namespace {

// splitmix64: small, fast, and good enough for pixel noise and layout.
uint64_t NextRandom(uint64_t* state) {
  *state += 0x9e3779b97f4a7c15ULL;
  uint64_t z = *state;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

double Unit(uint64_t* state) {  // [0, 1)
  return static_cast<double>(NextRandom(state) >> 11) * 0x1.0p-53;
}

uint8_t Clamp8(double v) {
  return static_cast<uint8_t>(std::clamp(std::lround(v), 0L, 255L));
}

struct Disk {
  double cx, cy, r;
  double color[3];
};

}  // namespace

RgbImage SyntheticPhoto(int width, int height, uint64_t seed) {
  RgbImage image;
  image.width = width;
  image.height = height;
  image.pixels.resize(static_cast<size_t>(width) * height * 3);
  uint64_t state = seed * 0x2545f4914f6cdd1dULL + 1;

  // Lighting: a gradient per channel across the frame.
  double base[3], dx[3], dy[3];
  for (int c = 0; c < 3; ++c) {
    base[c] = 60 + 120 * Unit(&state);
    dx[c] = (Unit(&state) - 0.5) * 120;
    dy[c] = (Unit(&state) - 0.5) * 120;
  }
  // Objects: hard-edged disks, sized relative to the frame so that a
  // 512×512 and a 1920×1080 picture look alike.
  const double scale = std::min(width, height);
  std::vector<Disk> disks(24);
  for (Disk& d : disks) {
    d.cx = Unit(&state) * width;
    d.cy = Unit(&state) * height;
    d.r = scale * (0.03 + 0.15 * Unit(&state));
    for (double& v : d.color) v = 255 * Unit(&state);
  }
  // Fine texture: a periodic pattern (fabric, foliage) of a few pixels'
  // period, plus sensor noise.
  const double fx = 0.35 + 0.3 * Unit(&state);
  const double fy = 0.25 + 0.3 * Unit(&state);
  constexpr double kTexture = 14;
  constexpr double kNoise = 10;

  // Row by row: the lighting, then the disks painted over their spans in
  // order (objects in front hide those behind), then texture and noise.
  std::vector<double> sin_x(static_cast<size_t>(width));
  for (int x = 0; x < width; ++x) sin_x[x] = std::sin(fx * x);
  std::vector<double> row(static_cast<size_t>(width) * 3);
  for (int y = 0; y < height; ++y) {
    const double v = static_cast<double>(y) / height;
    for (int x = 0; x < width; ++x) {
      const double u = static_cast<double>(x) / width;
      for (int c = 0; c < 3; ++c) row[x * 3 + c] = base[c] + dx[c] * u + dy[c] * v;
    }
    for (const Disk& d : disks) {
      const double ey = y - d.cy;
      if (ey * ey > d.r * d.r) continue;
      const double half = std::sqrt(d.r * d.r - ey * ey);
      const int x0 = std::max(0, static_cast<int>(std::ceil(d.cx - half)));
      const int x1 = std::min(width - 1, static_cast<int>(std::floor(d.cx + half)));
      for (int x = x0; x <= x1; ++x) {
        for (int c = 0; c < 3; ++c) row[x * 3 + c] = d.color[c] * (0.7 + 0.3 * v);
      }
    }
    const double sin_y = kTexture * std::sin(fy * y);
    uint8_t* out = &image.pixels[static_cast<size_t>(y) * width * 3];
    for (int x = 0; x < width; ++x) {
      const double texture = sin_y * sin_x[x];
      for (int c = 0; c < 3; ++c) {
        const double noise = kNoise * (Unit(&state) - 0.5) * 2;
        out[x * 3 + c] = Clamp8(row[x * 3 + c] + texture + noise);
      }
    }
  }
  return image;
}

void AreaResize(const uint8_t* in, int in_width, int in_height, uint8_t* out,
                int out_width, int out_height, std::vector<float>* scratch) {
  // Horizontal pass into a float row buffer per source row, then a vertical
  // pass. Output pixel i covers source [i*sx, (i+1)*sx).
  const double sx = static_cast<double>(in_width) / out_width;
  const double sy = static_cast<double>(in_height) / out_height;
  const size_t row = static_cast<size_t>(out_width) * 3;
  // Rows of the horizontal pass, then one row of vertical sums.
  scratch->resize(static_cast<size_t>(in_height) * row + row);
  float* rows = scratch->data();
  float* sum = rows + static_cast<size_t>(in_height) * row;
  for (int y = 0; y < in_height; ++y) {
    const uint8_t* src = in + static_cast<size_t>(y) * in_width * 3;
    float* dst = rows + static_cast<size_t>(y) * out_width * 3;
    for (int i = 0; i < out_width; ++i) {
      const double lo = i * sx;
      const double hi = std::min<double>((i + 1) * sx, in_width);
      double sum[3] = {0, 0, 0};
      for (int x = static_cast<int>(lo); x < hi; ++x) {
        const double w = std::min<double>(x + 1, hi) - std::max<double>(x, lo);
        for (int c = 0; c < 3; ++c) sum[c] += w * src[x * 3 + c];
      }
      const double covered = hi - lo;
      for (int c = 0; c < 3; ++c) {
        dst[i * 3 + c] = static_cast<float>(sum[c] / covered);
      }
    }
  }
  for (int j = 0; j < out_height; ++j) {
    const double lo = j * sy;
    const double hi = std::min<double>((j + 1) * sy, in_height);
    std::fill(sum, sum + row, 0.0f);
    for (int y = static_cast<int>(lo); y < hi; ++y) {
      const float w =
          static_cast<float>(std::min<double>(y + 1, hi) - std::max<double>(y, lo));
      const float* src = rows + static_cast<size_t>(y) * row;
      for (size_t k = 0; k < row; ++k) sum[k] += w * src[k];
    }
    const float inverse = static_cast<float>(1.0 / (hi - lo));
    uint8_t* dst = out + static_cast<size_t>(j) * row;
    for (size_t k = 0; k < row; ++k) dst[k] = Clamp8(sum[k] * inverse);
  }
}

double PsnrDb(const uint8_t* a, const uint8_t* b, int64_t bytes) {
  double squared = 0;
  for (int64_t i = 0; i < bytes; ++i) {
    const double d = static_cast<double>(a[i]) - b[i];
    squared += d * d;
  }
  if (squared == 0) return std::numeric_limits<double>::infinity();
  const double mse = squared / static_cast<double>(bytes);
  return 10 * std::log10(255.0 * 255.0 / mse);
}

}  // namespace fleetbench::agent
