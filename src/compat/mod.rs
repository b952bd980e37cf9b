pub mod sysbench;
