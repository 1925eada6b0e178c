mod golden;
mod peers;
mod scenarios;
mod sdk_python;
