#include "agent/benchmarks/decode/turbo_jpeg.h"

#include <turbojpeg.h>

#include <string>

#include "absl/strings/str_cat.h"

namespace fleetbench::agent {
namespace {

std::string Why(tjhandle handle) {
  const char* text = tjGetErrorStr2(handle);
  return text != nullptr ? text : "unknown TurboJPEG error";
}

}  // namespace

absl::StatusOr<std::vector<uint8_t>> EncodeJpeg(const RgbImage& image,
                                                int quality) {
  tjhandle handle = tjInitCompress();
  if (handle == nullptr) {
    return absl::InternalError(
        absl::StrCat("decode: tjInitCompress: ", Why(nullptr)));
  }
  unsigned char* buffer = nullptr;
  unsigned long size = 0;
  const int rc = tjCompress2(handle, image.pixels.data(), image.width,
                             image.width * 3, image.height, TJPF_RGB, &buffer,
                             &size, TJSAMP_420, quality, 0);
  absl::StatusOr<std::vector<uint8_t>> jpeg;
  if (rc != 0) {
    jpeg = absl::InvalidArgumentError(absl::StrCat(
        "decode: encoding ", image.width, "x", image.height, ": ", Why(handle)));
  } else {
    jpeg = std::vector<uint8_t>(buffer, buffer + size);
  }
  tjFree(buffer);
  tjDestroy(handle);
  return jpeg;
}

JpegDecoder::JpegDecoder() : handle_(tjInitDecompress()) {}

JpegDecoder::~JpegDecoder() {
  if (handle_ != nullptr) tjDestroy(handle_);
}

absl::Status JpegDecoder::status() const {
  if (handle_ == nullptr) {
    return absl::InternalError(
        absl::StrCat("decode: tjInitDecompress: ", Why(nullptr)));
  }
  return absl::OkStatus();
}

absl::Status JpegDecoder::Header(const std::vector<uint8_t>& jpeg, int* width,
                                 int* height) {
  int subsampling = 0;
  int colorspace = 0;
  if (tjDecompressHeader3(handle_, jpeg.data(), jpeg.size(), width, height,
                          &subsampling, &colorspace) != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("decode: reading the JPEG header: ", Why(handle_)));
  }
  return absl::OkStatus();
}

absl::Status JpegDecoder::Decode(const std::vector<uint8_t>& jpeg, int width,
                                 int height, uint8_t* rgb) {
  if (tjDecompress2(handle_, jpeg.data(), jpeg.size(), rgb, width, width * 3,
                    height, TJPF_RGB, 0) != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("decode: decoding: ", Why(handle_)));
  }
  return absl::OkStatus();
}

}  // namespace fleetbench::agent
