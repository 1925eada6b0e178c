mod cli;
mod demo_client;
mod demo_wire;
mod golden;
mod peers;
mod scenarios;
mod sdk_python;
