// agent/benchmarks/decode/turbo_jpeg.h — libjpeg-turbo's TurboJPEG API
// behind two small owners: an encoder that makes the benchmark's JPEGs and a
// decoder that the timed loop calls.
//
// Each object owns one tjhandle and is not thread-safe; the benchmark gives
// every thread its own decoder (TurboJPEG handles are per thread by design).
// Errors carry TurboJPEG's own message: INVALID_ARGUMENT for a picture it
// refuses, INTERNAL when it cannot start.
#ifndef FLEETBENCH_AGENT_BENCHMARKS_DECODE_TURBO_JPEG_H_
#define FLEETBENCH_AGENT_BENCHMARKS_DECODE_TURBO_JPEG_H_

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "agent/benchmarks/decode/synthetic_image.h"

namespace fleetbench::agent {

// Baseline JPEG, 4:2:0 chroma subsampling (what cameras and most photo
// datasets use), quality 1..100, the accurate integer DCT.
absl::StatusOr<std::vector<uint8_t>> EncodeJpeg(const RgbImage& image,
                                                int quality);

class JpegDecoder {
 public:
  JpegDecoder();
  ~JpegDecoder();
  JpegDecoder(const JpegDecoder&) = delete;
  JpegDecoder& operator=(const JpegDecoder&) = delete;

  // INTERNAL when TurboJPEG could not create the handle.
  absl::Status status() const;
  // Reads the header: the picture's size.
  absl::Status Header(const std::vector<uint8_t>& jpeg, int* width,
                      int* height);
  // Decodes to interleaved RGB, accurate DCT, into `rgb` (which must hold
  // width * height * 3 bytes of the size Header() gave).
  absl::Status Decode(const std::vector<uint8_t>& jpeg, int width, int height,
                      uint8_t* rgb);

 private:
  void* handle_ = nullptr;
};

}  // namespace fleetbench::agent

#endif  // FLEETBENCH_AGENT_BENCHMARKS_DECODE_TURBO_JPEG_H_
