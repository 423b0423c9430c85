// common/number_text.h — numbers as people read them in tables: the one
// definition the CLI's tables and the controller's dashboard pages share,
// so a figure reads the same in both.
#ifndef FLEETBENCH_COMMON_NUMBER_TEXT_H_
#define FLEETBENCH_COMMON_NUMBER_TEXT_H_

#include <string>

namespace fleetbench {

// Four decimals below 10, two below 1000, none above, "%.4g" below 0.001
// and from 1e9 (0 is "0.0000"). Not common/units.h's FormatNumber ("%.6g"),
// which writes the param values stored with samples.
std::string FormatForPeople(double value);

}  // namespace fleetbench

#endif  // FLEETBENCH_COMMON_NUMBER_TEXT_H_
